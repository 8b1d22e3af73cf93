package udfdev

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
)

// Options say which function Run runs and how.
type Options struct {
	// Function is the function's name in the module's self-description.
	Function string
	// BatchSize is the most records in one call; 0 means 1024, the
	// platform's default.
	BatchSize int
	// OnTimer names the on_timer function of a process function: at the end
	// of the input, the event-time timers fire in time order (as the final
	// watermark of a bounded job fires them), with the timers they register
	// that are then due. Processing-time timers do not fire.
	OnTimer string
	// Window is the size of the tumbling windows, aligned to the epoch,
	// that aggregate, reduce and window_process functions run over.
	Window time.Duration
	// Log receives the module's log lines, standard output and standard
	// error; nil discards them.
	Log *slog.Logger
}

// Run validates and compiles a module as the platform does, runs one of its
// functions over recs in batches, and writes each output entry to out as a
// JSON line, in order. A record function (map, filter, flat_map, key,
// timestamp) answers with the record the host passes on, with the fields it
// inherits from the input, or the error the function reported for the
// input. A process function sees the records of a batch grouped by their
// keys, with state and timers kept in memory (no TTL, watermark NoWatermark,
// processing time 0); after its outputs, Run writes the state and the
// registered timers. Window functions (aggregate, reduce, window_process)
// run over tumbling windows of Options.Window per key and answer each
// window's results; a session_gap function answers each record's gap and
// then the sessions they make; a watermark function answers the watermarks
// it emits after records.
func Run(ctx context.Context, wasm []byte, recs []abi.Record, out io.Writer, opt Options) error {
	if opt.BatchSize <= 0 {
		opt.BatchSize = 1024
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	h, err := host.New(ctx, host.Config{Logger: opt.Log})
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	mod, err := h.Compile(ctx, wasm)
	if err != nil {
		return err
	}
	fn := mod.Description.Lookup(opt.Function)
	if fn < 0 {
		return fmt.Errorf("the module has no function %q; it has %s", opt.Function, functionList(mod.Description))
	}
	kind := mod.Description.Functions[fn].Kind
	if !runs(kind) {
		return fmt.Errorf("function %q is a %s function; udf test runs map, filter, flat_map, key, timestamp, watermark, aggregate, reduce, window_process, session_gap and process functions", opt.Function, kind)
	}
	pool := mod.NewGuest(host.InstanceConfig{})
	defer pool.Close(ctx)
	w := newLineWriter(out)
	if opt.OnTimer != "" && kind != abi.KindProcess {
		return fmt.Errorf("--on-timer goes with a process function; %q is a %s function", opt.Function, kind)
	}
	if opt.Window != 0 && !isWindowKind(kind) {
		return fmt.Errorf("--window goes with an aggregate, reduce or window_process function; %q is a %s function", opt.Function, kind)
	}
	switch kind {
	case abi.KindAggregate, abi.KindReduce, abi.KindWindowProcess:
		return runWindows(ctx, pool, fn, kind, mod.Description.States, recs, w, opt)
	case abi.KindSessionGap:
		return runSessionGap(ctx, pool, fn, recs, w, opt)
	case abi.KindWatermark:
		return runWatermark(ctx, pool, fn, recs, w, opt)
	case abi.KindProcess:
		onTimer := -1
		if opt.OnTimer != "" {
			if onTimer = mod.Description.Lookup(opt.OnTimer); onTimer < 0 || mod.Description.Functions[onTimer].Kind != abi.KindOnTimer {
				return fmt.Errorf("the module has no on_timer function %q; it has %s", opt.OnTimer, functionList(mod.Description))
			}
		}
		return runProcess(ctx, pool, fn, onTimer, mod.Description.States, recs, w, opt)
	}
	return callBatches(ctx, pool, fn, recs, opt.BatchSize, func(start int, batch []abi.Record, output []byte) error {
		if err := writeOutputs(w, kind, output, batch, start); err != nil {
			return fmt.Errorf("function %q: %w", opt.Function, err)
		}
		return nil
	})
}

// callBatches calls a function of a kind that takes input frames over recs
// in batches of size, and hands each batch's output to answer with the
// batch and the input number of its first record.
func callBatches(ctx context.Context, pool *host.Guest, fn int, recs []abi.Record, size int, answer func(start int, batch []abi.Record, output []byte) error) error {
	var frame []byte
	for start := 0; start < len(recs); start += size {
		batch := recs[start:min(start+size, len(recs))]
		frame = abi.AppendFrame(frame[:0], batch)
		output, err := pool.Call(ctx, fn, frame)
		if err != nil {
			return err
		}
		if err := answer(start, batch, output); err != nil {
			return err
		}
	}
	return nil
}

// runs reports whether Run runs functions of kind k: every kind but
// on_timer (which runs with its process function) and the joins.
func runs(k abi.Kind) bool {
	return isRecordKind(k) || isWindowKind(k) || k == abi.KindSessionGap || k == abi.KindWatermark || k == abi.KindProcess
}

func isWindowKind(k abi.Kind) bool {
	return k == abi.KindAggregate || k == abi.KindReduce || k == abi.KindWindowProcess
}

func isRecordKind(k abi.Kind) bool {
	switch k {
	case abi.KindMap, abi.KindFilter, abi.KindFlatMap, abi.KindKey, abi.KindTimestamp:
		return true
	}
	return false
}

// functionList names a module's functions with their kinds.
func functionList(d abi.Description) string {
	if len(d.Functions) == 0 {
		return "none"
	}
	names := make([]string, len(d.Functions))
	for i, f := range d.Functions {
		names[i] = fmt.Sprintf("%s (%s)", f.Name, f.Kind)
	}
	return strings.Join(names, ", ")
}

// writeOutputs resolves the entries of an output frame answering batch, the
// records from input number first on, against their inputs.
func writeOutputs(w *lineWriter, kind abi.Kind, output []byte, batch []abi.Record, first int) error {
	var r abi.OutputReader
	if err := r.Reset(output, uint32(len(batch))); err != nil {
		return err
	}
	var e abi.Entry
	for r.Next(&e) {
		if e.Index == abi.AllRecords {
			return fmt.Errorf("the whole batch failed: %s", e.Message)
		}
		if e.Tag == abi.TagError {
			msg, input := string(e.Message), first+int(e.Index)
			if err := w.write(outputLine{Input: &input, Error: &msg}); err != nil {
				return err
			}
			continue
		}
		if !kind.Answers(e.Tag) {
			return fmt.Errorf("a %s function wrote an entry with tag %d", kind, e.Tag)
		}
		rec := e.Apply(&batch[e.Index])
		if err := w.write(recordLine(first+int(e.Index), &rec)); err != nil {
			return err
		}
	}
	return r.Err()
}

// runProcess runs a process function over recs in batches, each batch
// grouped by key in the order keys first appear, then writes the state and
// timers.
func runProcess(ctx context.Context, pool *host.Guest, fn, onTimer int, states []abi.State, recs []abi.Record, w *lineWriter, opt Options) error {
	env := newMemEnv(states)
	var frame []byte
	var order []int
	for start := 0; start < len(recs); start += opt.BatchSize {
		end := min(start+opt.BatchSize, len(recs))
		groups := map[string][]int{}
		env.keys = env.keys[:0]
		for i := start; i < end; i++ {
			k := string(recs[i].Key)
			if _, ok := groups[k]; !ok {
				env.keys = append(env.keys, recs[i].Key)
			}
			groups[k] = append(groups[k], i)
		}
		frame = abi.AppendFrameHead(frame[:0], abi.FrameHead{Watermark: abi.NoWatermark, Groups: uint32(len(env.keys))})
		order = order[:0]
		for _, key := range env.keys {
			members := groups[string(key)]
			frame = abi.AppendGroupHead(frame, &abi.GroupHead{Key: key}, uint32(len(members)))
			for _, i := range members {
				frame = abi.AppendRecord(frame, &recs[i])
				order = append(order, i)
			}
		}
		env.cur = nil
		output, err := pool.CallWith(ctx, fn, frame, env)
		if err != nil {
			return err
		}
		if err := writeKeyedOutputs(w, output, recs, order); err != nil {
			return fmt.Errorf("function %q: %w", opt.Function, err)
		}
	}
	if onTimer >= 0 {
		if err := fireTimers(ctx, pool, onTimer, env, w); err != nil {
			return fmt.Errorf("function %q: %w", opt.OnTimer, err)
		}
	}
	return env.write(w)
}

// fireTimers fires the registered event-time timers in time order, a batch
// of the earliest at a time, until none is left.
func fireTimers(ctx context.Context, pool *host.Guest, fn int, env *memEnv, w *lineWriter) error {
	var frame []byte
	for {
		due := env.eventTimers()
		if len(due) == 0 {
			return nil
		}
		frame = abi.AppendFrameHead(frame[:0], abi.FrameHead{Watermark: abi.NoWatermark, Groups: uint32(len(due))})
		env.keys = env.keys[:0]
		for _, t := range due {
			delete(env.timers, t)
			env.keys = append(env.keys, []byte(t.key))
			frame = abi.AppendGroupHead(frame, &abi.GroupHead{Flags: abi.GroupTimer, Key: []byte(t.key), TimerTime: t.ts}, 0)
		}
		env.cur = nil
		output, err := pool.CallWith(ctx, fn, frame, env)
		if err != nil {
			return err
		}
		if err := writeTimerOutputs(w, output, due); err != nil {
			return err
		}
	}
}

// writeTimerOutputs resolves the entries of an on_timer function's output:
// an entry's index is a timer, whose key and timestamp a record inherits.
func writeTimerOutputs(w *lineWriter, output []byte, due []timer) error {
	var r abi.OutputReader
	if err := r.Reset(output, uint32(len(due))); err != nil {
		return err
	}
	var e abi.Entry
	for r.Next(&e) {
		if e.Index == abi.AllRecords {
			return fmt.Errorf("the whole batch failed: %s", e.Message)
		}
		t := due[e.Index]
		fired := &firedLine{Timestamp: t.ts}
		fired.Key, fired.KeyBase64 = text([]byte(t.key))
		switch e.Tag {
		case abi.TagError:
			msg := string(e.Message)
			if err := w.write(outputLine{Timer: fired, Error: &msg}); err != nil {
				return err
			}
		case abi.TagRecord:
			rec := e.Apply(&abi.Record{Key: []byte(t.key), Timestamp: t.ts})
			line := recordLine(0, &rec)
			line.Input, line.Timer = nil, fired
			if err := w.write(line); err != nil {
				return err
			}
		default:
			return fmt.Errorf("an on_timer function wrote an entry with tag %d", e.Tag)
		}
	}
	return r.Err()
}

// writeKeyedOutputs resolves the entries of a process function's output
// frame: an entry's index is a record's position in the grouped frame,
// order[index] its input number.
func writeKeyedOutputs(w *lineWriter, output []byte, recs []abi.Record, order []int) error {
	var r abi.OutputReader
	if err := r.Reset(output, uint32(len(order))); err != nil {
		return err
	}
	var e abi.Entry
	for r.Next(&e) {
		if e.Index == abi.AllRecords {
			return fmt.Errorf("the whole batch failed: %s", e.Message)
		}
		input := order[e.Index]
		switch e.Tag {
		case abi.TagError:
			msg := string(e.Message)
			if err := w.write(outputLine{Input: &input, Error: &msg}); err != nil {
				return err
			}
		case abi.TagRecord:
			rec := e.Apply(&recs[input])
			if err := w.write(recordLine(input, &rec)); err != nil {
				return err
			}
		default:
			return fmt.Errorf("a process function wrote an entry with tag %d", e.Tag)
		}
	}
	return r.Err()
}
