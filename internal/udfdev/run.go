package udfdev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/process"
	"wasmstream.io/platform/runtime/operator/record"
	"wasmstream.io/platform/runtime/operator/window"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
	"wasmstream.io/platform/watermark"
)

// Options say which function Run runs and how.
type Options struct {
	// Function is the function's name in the module's self-description.
	Function string
	// BatchSize is the most records in one call; 0 means 1024, the
	// platform's default.
	BatchSize int
	// OnTimer names the on_timer function of a process function: at the end
	// of the input, the final watermark fires the event-time timers, as it
	// does in a bounded job. Processing-time timers do not fire.
	OnTimer string
	// Window is the size of the tumbling windows, aligned to the epoch,
	// that aggregate, reduce and window_process functions run over.
	Window time.Duration
	// State is the state backend of process and window_process functions:
	// state.BackendMemory (when empty) or state.BackendPebble, in a
	// temporary directory.
	State string
	// Clock is the processing time the operators see, in milliseconds
	// since the epoch; nil means 0. Steps that set the processing time
	// replace it from then on.
	Clock func() int64
	// Steps move the watermark and processing time between records
	// (ReadInput reads them).
	Steps []Step
	// SideOutputs are the side outputs a process or window function may
	// write (an operator's side_outputs); each record written to one is
	// printed naming it. A record written to any other tag fails its input.
	SideOutputs []string
	// Broadcast names the process_broadcast function that runs with the
	// process function Function in a broadcast_process operator: Steps
	// with a Broadcast record go to it, with the broadcast states kept
	// from one to the next, and the keyed records to Function, which reads
	// the broadcast states as they stand.
	Broadcast string
	// ProcessingTime runs window functions over processing-time windows:
	// a record goes to the window of the processing time it arrives at,
	// and windows fire when a step moves processing time past their end.
	ProcessingTime bool
	// Log receives the module's log lines, standard output and standard
	// error; nil discards them.
	Log *slog.Logger
}

// Run validates and compiles a module as the platform does, runs one of its
// functions over recs through the operator the platform runs it in, and
// writes each output as a JSON line, in order. Records go to the operator
// in batches of Options.BatchSize, and the end of the input is the final
// watermark, as in a bounded job.
//
// A record function (map, filter, flat_map, key, timestamp) answers with
// the records it passes on, each naming its input, or the error the
// function reported for an input. A process function gets each batch
// grouped by key, with keyed state in Options.State and its timers; after
// its outputs, Run writes the state and the timers still registered. With
// Options.OnTimer the final watermark fires the event-time timers first.
// Window functions (aggregate, reduce, window_process) run over tumbling
// windows of Options.Window per key and answer each window's results; the
// per-window state of a window_process function is written as it stands
// when the window's state is cleared. A session_gap function answers each
// record's gap and then the sessions they make (a count per session); a
// watermark function answers the watermarks its source emits after records.
// A trap fails the run.
func Run(ctx context.Context, wasm []byte, recs []abi.Record, out io.Writer, opt Options) error {
	if opt.BatchSize <= 0 {
		opt.BatchSize = 1024
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Clock == nil {
		opt.Clock = func() int64 { return 0 }
	}
	if err := checkSteps(opt.Steps, len(recs)); err != nil {
		return err
	}
	clock := &stepClock{now: opt.Clock(), base: opt.Clock}
	opt.Clock = clock.read
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
		return fmt.Errorf("function %q is a %s function; udf test runs map, filter, flat_map, key, timestamp, watermark, aggregate, reduce, window_process, session_gap and process functions (a process_broadcast function with --broadcast, beside its process function)", opt.Function, kind)
	}
	if opt.OnTimer != "" && kind != abi.KindProcess {
		return fmt.Errorf("--on-timer goes with a process function; %q is a %s function", opt.Function, kind)
	}
	if opt.Window != 0 && !isWindowKind(kind) {
		return fmt.Errorf("--window goes with an aggregate, reduce or window_process function; %q is a %s function", opt.Function, kind)
	}
	if len(opt.SideOutputs) > 0 && kind != abi.KindProcess && kind != abi.KindWindowProcess {
		return fmt.Errorf("--side-outputs go with a process or window_process function; %q is a %s function", opt.Function, kind)
	}
	broadcastFn, err := broadcastFunction(mod.Description, opt, kind)
	if err != nil {
		return err
	}
	if opt.ProcessingTime && !isWindowKind(kind) {
		return fmt.Errorf("processing-time windows go with an aggregate, reduce or window_process function; %q is a %s function", opt.Function, kind)
	}
	if isWindowKind(kind) && opt.Window <= 0 {
		return fmt.Errorf("a %s function runs over windows: give their size with --window", kind)
	}
	onTimer := -1
	if opt.OnTimer != "" {
		if onTimer = mod.Description.Lookup(opt.OnTimer); onTimer < 0 || mod.Description.Functions[onTimer].Kind != abi.KindOnTimer {
			return fmt.Errorf("the module has no on_timer function %q; it has %s", opt.OnTimer, functionList(mod.Description))
		}
	}
	r := &run{mod: mod, recs: recs, w: newLineWriter(out), kind: kind, opt: opt, states: mod.Description.States, clock: clock, afterInput: func() error { return nil }}
	r.prefixes = []string{r.prefix(opt.Function)}
	if opt.OnTimer != "" {
		r.prefixes = append(r.prefixes, r.prefix(opt.OnTimer))
	}
	r.policy = &operator.ErrorPolicy{Mode: operator.OnErrorFail, Vertex: opt.Function, Counts: &operator.ErrorCounts{}, Log: opt.Log, Report: r.failed}
	switch kind {
	case abi.KindAggregate, abi.KindReduce, abi.KindWindowProcess, abi.KindSessionGap:
		return r.windows(ctx, fn)
	case abi.KindWatermark:
		return r.watermarks(ctx, fn)
	case abi.KindProcess:
		return r.process(ctx, fn, onTimer, broadcastFn)
	}
	op := record.NewFunction(kind, mod.ID, opt.Function, fn, mod.NewGuest(host.InstanceConfig{}), opt.BatchSize, r.policy, r)
	return r.drive(ctx, op, false)
}

// runs reports whether Run runs functions of kind k: every kind but
// on_timer (which runs with its process function) and the joins, which
// need two inputs and run only in a job.
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

// drive feeds the records to stage in batches, then the end of input as the
// final watermark when final is set, and finishes and closes it.
func (r *run) drive(ctx context.Context, stage operator.Stage, final bool) (err error) {
	defer func() { err = errors.Join(err, stage.Close(ctx)) }()
	start := 0
	for _, st := range r.opt.Steps {
		if err := r.feed(ctx, stage, start, st.Before); err != nil {
			return err
		}
		start = st.Before
		if err := r.step(ctx, stage, st); err != nil {
			return err
		}
	}
	if err := r.feed(ctx, stage, start, len(r.recs)); err != nil {
		return err
	}
	r.batch, r.firing = nil, true
	if final {
		if err := stage.Advance(ctx, watermark.MaxWatermark); err != nil {
			return err
		}
	}
	if err := r.afterInput(); err != nil {
		return err
	}
	return stage.Finish(ctx)
}

// openState opens the keyed state of the module's states in the backend
// the options name, owning every key group.
func (r *run) openState() (*state.Keyed, func(), error) {
	descs, err := operator.StateDescriptors(r.mod.Description, nil)
	if err != nil {
		return nil, nil, err
	}
	cfg := state.Config{Backend: r.opt.State, MaxParallelism: 128, Range: state.RangeOf(128, 1, 0), States: descs, Clock: state.ClockFunc(r.opt.Clock)}
	cleanup := func() {}
	if r.opt.State == state.BackendPebble {
		dir, err := os.MkdirTemp("", "udf-test-state-")
		if err != nil {
			return nil, nil, err
		}
		cfg.Dir, cfg.SweepInterval, cfg.Logger = dir, -1, r.opt.Log
		cleanup = func() { os.RemoveAll(dir) }
	}
	keyed, err := state.Open(cfg)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return keyed, cleanup, nil
}

// call is the grouped call of function fn.
func (r *run) call(fn int) *operator.GroupCall {
	return &operator.GroupCall{Module: r.mod.ID, Function: r.mod.Description.Functions[fn].Name, Fn: fn, Guest: r.mod.NewGuest(host.InstanceConfig{})}
}

// process runs a process function (and its on_timer function, when
// onTimer is not -1) in a process operator, or with its process_broadcast
// function (when broadcastFn is not -1) in a broadcast_process operator,
// then writes the state and the timers left.
func (r *run) process(ctx context.Context, fn, onTimer, broadcastFn int) error {
	keyed, cleanup, err := r.openState()
	if err != nil {
		return err
	}
	defer cleanup()
	var timers *operator.GroupCall
	if onTimer >= 0 {
		timers = r.call(onTimer)
	}
	if broadcastFn >= 0 {
		return r.broadcastProcess(ctx, keyed, fn, broadcastFn, timers)
	}
	op := process.New(r.opt.Function, *r.call(fn), timers, keyed, r.opt.BatchSize, r.policy, r)
	op.SetSideOutputs(r.sideOutputs())
	op.Clock = r.opt.Clock
	r.afterInput = func() error { return r.writeProcessState(keyed, op) }
	return r.drive(ctx, op, onTimer >= 0)
}

// windows runs a window function over tumbling windows of Options.Window,
// or a session_gap function over sessions counted by the built-in count
// aggregate, in a window operator.
func (r *run) windows(ctx context.Context, fn int) error {
	cfg := window.Config{Vertex: r.opt.Function, BatchSize: r.opt.BatchSize, Policy: r.policy, Next: r, LateCount: &atomic.Int64{}, Clock: r.opt.Clock}
	if r.kind == abi.KindSessionGap {
		cfg.Plan = &plan.Window{Type: plan.WindowSession, Builtin: "count"}
		cfg.GapFn = r.call(fn)
		op := window.New(cfg)
		r.gaps = op
		return r.drive(ctx, op, true)
	}
	size := r.opt.Window.Milliseconds()
	cfg.Plan = &plan.Window{Type: plan.WindowTumbling, Size: size, Slide: size, FnKind: r.kind, States: r.kind == abi.KindWindowProcess && len(r.states) > 0,
		Processing: r.opt.ProcessingTime}
	cfg.Fn = r.call(fn)
	cfg.Sides = r.sideOutputs()
	if cfg.Plan.States {
		keyed, cleanup, err := r.openState()
		if err != nil {
			return err
		}
		defer cleanup()
		cfg.State, cfg.States = keyed, len(r.states)
		cfg.Clearing = func(key []byte, start, end int64) error { return r.readWindowState(keyed, key, start, end) }
		r.afterInput = r.writeWindowState
	}
	return r.drive(ctx, window.New(cfg), true)
}

// watermarks runs a watermark function as the punctuator of a source's
// watermark generator.
func (r *run) watermarks(ctx context.Context, fn int) error {
	g := watermark.NewGenerator(watermark.Punctuated, 0, 0, 0, func(context.Context, bool) error { return nil }, r)
	g.Clock = r.opt.Clock
	g.SetSplits(1)
	g.Punct = record.NewPunctuator(r.mod.ID, r.opt.Function, fn, r.mod.NewGuest(host.InstanceConfig{}), r.opt.BatchSize, r.policy)
	return r.drive(ctx, g, true)
}
