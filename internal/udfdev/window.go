package udfdev

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
)

// windowGroup is the records of one key in one tumbling window, by input
// number in input order.
type windowGroup struct {
	key        []byte
	start, end int64
	recs       []int
}

// windowLine is the window an output answers.
type windowLine struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// tumbling assigns recs to tumbling windows of size milliseconds, aligned to
// the epoch, per key. Windows come in the order they would fire: by end,
// then by the first appearance of their key in the input.
func tumbling(recs []abi.Record, size int64) []windowGroup {
	var groups []windowGroup
	index := map[string]int{}
	for i := range recs {
		start := recs[i].Timestamp - mod(recs[i].Timestamp, size)
		id := fmt.Sprintf("%d/%s", start, recs[i].Key)
		g, ok := index[id]
		if !ok {
			g = len(groups)
			index[id] = g
			groups = append(groups, windowGroup{key: recs[i].Key, start: start, end: start + size})
		}
		groups[g].recs = append(groups[g].recs, i)
	}
	slices.SortStableFunc(groups, func(a, b windowGroup) int { return cmp.Compare(a.end, b.end) })
	return groups
}

// mod is the non-negative remainder of a divided by b.
func mod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// runWindows runs an aggregate, reduce or window_process function over the
// tumbling windows of recs, as a window operator fires them when the
// watermark passes their ends: an aggregate's or reduce's add call folds a
// window's records into a new accumulator, and its result is the window's
// record; a window_process function gets each window's records at once.
//
// A window_process function of a module that declares states gets its
// per-window state in memory; after its outputs, Run writes that state, as
// it stands before the platform would clear it at the window's end plus the
// allowed lateness.
func runWindows(ctx context.Context, pool *host.Guest, fn int, kind abi.Kind, states []abi.State, recs []abi.Record, w *lineWriter, opt Options) error {
	if opt.Window <= 0 {
		return fmt.Errorf("a %s function runs over windows: give their size with --window", kind)
	}
	var env *memEnv
	if kind == abi.KindWindowProcess && len(states) > 0 {
		env = newMemEnv(states)
	}
	groups := tumbling(recs, opt.Window.Milliseconds())
	for start := 0; start < len(groups); start += opt.BatchSize {
		batch := groups[start:min(start+opt.BatchSize, len(groups))]
		var err error
		if kind == abi.KindWindowProcess {
			err = fire(ctx, pool, fn, abi.OpNone, batch, recs, nil, env, w)
		} else {
			err = aggregateWindows(ctx, pool, fn, kind, batch, recs, w)
		}
		if err != nil {
			return fmt.Errorf("function %q: %w", opt.Function, err)
		}
	}
	if env != nil {
		return env.write(w)
	}
	return nil
}

// aggregateWindows folds each window's records into an accumulator and
// writes the windows' results: an aggregate's result call, or a reduce's
// accumulator.
func aggregateWindows(ctx context.Context, pool *host.Guest, fn int, kind abi.Kind, groups []windowGroup, recs []abi.Record, w *lineWriter) error {
	frame := abi.AppendFrameHead(nil, abi.FrameHead{Op: abi.OpAdd, Watermark: abi.NoWatermark, Groups: uint32(len(groups))})
	for _, g := range groups {
		frame = abi.AppendGroupHead(frame, &abi.GroupHead{Key: g.key}, uint32(len(g.recs)))
		for _, i := range g.recs {
			frame = abi.AppendRecord(frame, &recs[i])
		}
	}
	output, err := pool.Call(ctx, fn, frame)
	if err != nil {
		return err
	}
	accs := make([][]byte, len(groups))
	err = eachEntry(output, len(groups), func(e *abi.Entry) error {
		g := &groups[e.Index]
		switch e.Tag {
		case abi.TagError:
			return w.write(windowError(g, e.Message))
		case abi.TagAccumulator:
			accs[e.Index] = slices.Clone(e.Value)
			return nil
		}
		return fmt.Errorf("an add call wrote an entry with tag %d", e.Tag)
	})
	if err != nil {
		return err
	}
	var folded []windowGroup
	var results [][]byte
	for i, acc := range accs {
		if acc != nil {
			folded = append(folded, groups[i])
			results = append(results, acc)
		}
	}
	if kind == abi.KindReduce {
		for i := range folded {
			rec := abi.Record{Key: folded[i].key, Value: results[i], Timestamp: folded[i].end - 1}
			if err := w.write(windowRecord(&folded[i], &rec)); err != nil {
				return err
			}
		}
		return nil
	}
	return fire(ctx, pool, fn, abi.OpResult, folded, nil, results, nil, w)
}

// fire calls a window function with one group per window, carrying the
// window and either its records (window_process) or its accumulator
// (an aggregate's result call), and writes the records it answers. env,
// when set, is the per-window state of a window_process function.
func fire(ctx context.Context, pool *host.Guest, fn int, op abi.Op, groups []windowGroup, recs []abi.Record, accs [][]byte, env *memEnv, w *lineWriter) error {
	if len(groups) == 0 {
		return nil
	}
	var hostEnv host.Env
	if env != nil {
		env.keys, env.windows, env.cur = env.keys[:0], env.windows[:0], nil
		for _, g := range groups {
			env.keys = append(env.keys, g.key)
			env.windows = append(env.windows, windowLine{Start: g.start, End: g.end})
		}
		hostEnv = env
	}
	frame := abi.AppendFrameHead(nil, abi.FrameHead{Op: op, Watermark: abi.NoWatermark, Groups: uint32(len(groups))})
	for i, g := range groups {
		head := abi.GroupHead{Flags: abi.GroupWindow, Key: g.key, WindowStart: g.start, WindowEnd: g.end}
		if accs != nil {
			head.Flags |= abi.GroupAcc
			head.Acc = accs[i]
			frame = abi.AppendGroupHead(frame, &head, 0)
			continue
		}
		frame = abi.AppendGroupHead(frame, &head, uint32(len(g.recs)))
		for _, r := range g.recs {
			frame = abi.AppendRecord(frame, &recs[r])
		}
	}
	output, err := pool.CallWith(ctx, fn, frame, hostEnv)
	if err != nil {
		return err
	}
	return eachEntry(output, len(groups), func(e *abi.Entry) error {
		g := &groups[e.Index]
		switch e.Tag {
		case abi.TagError:
			return w.write(windowError(g, e.Message))
		case abi.TagRecord:
			rec := e.Apply(&abi.Record{Key: g.key, Timestamp: g.end - 1})
			return w.write(windowRecord(g, &rec))
		}
		return fmt.Errorf("a window call wrote an entry with tag %d", e.Tag)
	})
}

// eachEntry calls f for each entry of an output frame answering n inputs
// or groups; an entry failing them all fails the call.
func eachEntry(output []byte, n int, f func(e *abi.Entry) error) error {
	var r abi.OutputReader
	if err := r.Reset(output, uint32(n)); err != nil {
		return err
	}
	var e abi.Entry
	for r.Next(&e) {
		if e.Index == abi.AllRecords {
			return fmt.Errorf("the whole batch failed: %s", e.Message)
		}
		if err := f(&e); err != nil {
			return err
		}
	}
	return r.Err()
}

// windowRecord renders a window's result record.
func windowRecord(g *windowGroup, r *abi.Record) outputLine {
	line := recordLine(0, r)
	line.Input, line.Window = nil, &windowLine{Start: g.start, End: g.end}
	return line
}

// windowError renders the error a window's group failed with.
func windowError(g *windowGroup, msg []byte) outputLine {
	line := outputLine{Window: &windowLine{Start: g.start, End: g.end}}
	line.Key, line.KeyBase64 = text(g.key)
	m := string(msg)
	line.Error = &m
	return line
}
