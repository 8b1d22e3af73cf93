package runtime

import (
	"context"
	"errors"
	"log/slog"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
)

// sourceStages puts the event-time stages of source v in front of next:
// the timestamp assigner (a JSON field or a timestamp function) and the
// watermark generator, as time and the source's watermark say.
func (b *builder) sourceStages(t *task, v *plan.Vertex, i int, policy *operator.ErrorPolicy, next operator.Stage) operator.Stage {
	src := v.Source
	mode := b.j.plan.Job.Time
	s := next
	if mode == plan.TimeProcessing {
		return b.timestampStage(t, v, i, policy, s)
	}
	w := src.Watermark
	interval, idle := int64(200), int64(0)
	if w != nil {
		interval, idle = w.Interval.Milliseconds(), w.IdleTimeout.Milliseconds()
	}
	if mode == plan.TimeIngestion {
		g := newWMSource(wmIngestion, 0, interval, 0, t.announceIdle, s)
		t.time.gen = g
		return g
	}
	if w == nil || w.Strategy == "" || w.Strategy == "none" {
		return b.timestampStage(t, v, i, policy, s)
	}
	var g *wmSource
	switch w.Strategy {
	case "punctuated":
		g = newWMSource(wmPunctuated, 0, interval, idle, t.announceIdle, s)
		f := v.WatermarkFn
		g.punct = &punctuator{
			module: f.Module, function: f.Function, fn: f.Index, pool: b.pool(v.ID, i, f),
			batchSize: b.j.plan.Job.UDF.BatchSize, policy: policy,
		}
	default:
		g = newWMSource(wmBounded, w.MaxOutOfOrderness.Milliseconds(), interval, idle, t.announceIdle, s)
	}
	t.time.gen = g
	return b.timestampStage(t, v, i, policy, g)
}

// timestampStage puts the source's timestamp assigner, if any, in front of
// next.
func (b *builder) timestampStage(t *task, v *plan.Vertex, i int, policy *operator.ErrorPolicy, next operator.Stage) operator.Stage {
	if ts := v.Source.Timestamp; ts != nil && ts.Field != "" {
		return &fieldExtract{field: ts.Field, timestamp: true, policy: policy, next: next}
	}
	if v.Fn != nil {
		return b.wasmStage(t, v.ID, i, v.Fn, abi.KindTimestamp, policy, next)
	}
	return next
}

// pool makes an instance pool of f's module for subtask i of a vertex.
func (b *builder) pool(vertexID string, i int, f *plan.Func) *host.Guest {
	limits := b.j.plan.Job.UDF
	return b.module(f).mod.NewGuest(host.InstanceConfig{
		MemoryLimit: limits.MemoryLimit,
		CallTimeout: limits.CallTimeout.Duration,
		Attrs:       []slog.Attr{slog.String("job", b.j.id), slog.String("vertex", vertexID), slog.Int("subtask", i)},
	})
}

// windowStage builds the window operator of v for subtask i in front of
// next, with its late output.
func (b *builder) windowStage(ctx context.Context, t *task, v *plan.Vertex, i int, c *counters, policy *operator.ErrorPolicy, next operator.Stage) (operator.Stage, error) {
	wp := v.Window
	var st *windowState
	if wp.States {
		keyed, err := b.keyedState(v, i, v.Fn)
		if err != nil {
			return nil, err
		}
		st = newWindowState(keyed, len(b.module(v.Fn).desc.States), wp)
	}
	late, err := b.lateOutputs(ctx, t, v, i)
	if err != nil {
		if st != nil {
			err = errors.Join(err, st.keyed.Close())
		}
		return nil, err
	}
	batch := b.j.plan.Job.UDF.BatchSize
	out := &operator.Out{Max: batch, Next: next}
	w := newWindowOp(v.ID, wp, c, policy, out, late)
	call := func(f *plan.Func, kind abi.Kind) *operator.GroupRunner {
		return &operator.GroupRunner{Kind: kind, MaxGroups: batch, Policy: policy, Out: out,
			Call: operator.GroupCall{Module: f.Module, Function: f.Function, Fn: f.Index, Guest: b.pool(v.ID, i, f)}}
	}
	switch {
	case wp.Builtin != "":
		w.fn = &builtinFunc{name: wp.Builtin, field: wp.Field, policy: policy, out: out}
	case wp.FnKind == abi.KindWindowProcess:
		pc := call(v.Fn, wp.FnKind)
		if st != nil {
			pc.State, pc.Call.Env, w.state = st, &st.env, st
		}
		w.fn = &udfProcessFunc{call: pc, store: w.store, out: out, policy: policy, wm: &w.wm, state: st}
	default:
		w.fn = &udfAccFunc{reduce: wp.FnKind == abi.KindReduce, call: call(v.Fn, wp.FnKind), store: w.store, out: out, policy: policy, wm: &w.wm}
	}
	if wp.GapFn != nil {
		f := wp.GapFn
		w.gapCall = &operator.GroupCall{Module: f.Module, Function: f.Function, Fn: f.Index, Guest: b.pool(v.ID, i, f)}
	}
	return w, nil
}

// lateOutputs builds the stages that receive v's late records: its late
// edges, chained or through the exchange. Nil when v has none.
func (b *builder) lateOutputs(ctx context.Context, t *task, v *plan.Vertex, i int) (operator.Stage, error) {
	var outs operator.Fanout
	for _, e := range v.Out {
		if !e.Late {
			continue
		}
		if e.Chained() {
			s, err := b.vertexStage(ctx, t, e.To, i)
			if err != nil {
				return nil, errors.Join(err, outs.Close(ctx))
			}
			outs = append(outs, s)
			continue
		}
		w := b.edges[e].Writer(i)
		t.writers = append(t.writers, w)
		outs = append(outs, &exchangeOut{writer: w, part: b.partitioner(e, i), channels: e.To.Parallelism})
	}
	switch len(outs) {
	case 0:
		return nil, nil
	case 1:
		return outs[0], nil
	}
	return outs, nil
}

// sourceSplits tells a source's watermark generator how many splits its
// subtask reads.
func (t *task) sourceSplits() {
	if t.time.gen == nil {
		return
	}
	n := 1
	if ss, ok := t.source.(connector.SplitSource); ok {
		n = ss.Splits()
	}
	t.time.gen.setSplits(n)
}
