package exec

import (
	"context"
	"errors"
	"log/slog"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/record"
	"wasmstream.io/platform/runtime/operator/window"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/watermark"
)

// sourceStages puts the event-time stages of source v in front of next:
// the timestamp assigner (a JSON field or a timestamp function) and the
// watermark generator, as time and the source's watermark say.
func (b *builder) sourceStages(t *Task, v *plan.Vertex, i int, policy *operator.ErrorPolicy, next operator.Stage) operator.Stage {
	src := v.Source
	mode := b.j.Plan.Job.Time
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
		g := watermark.NewGenerator(watermark.Ingestion, 0, interval, 0, t.announceIdle, s)
		// A scripted clock stamps the records with the script's time.
		g.Clock = t.clockFunc()
		t.time.gen = g
		return g
	}
	if w == nil || w.Strategy == "" || w.Strategy == "none" {
		return b.timestampStage(t, v, i, policy, s)
	}
	var g *watermark.Generator
	switch w.Strategy {
	case "punctuated":
		g = watermark.NewGenerator(watermark.Punctuated, 0, interval, idle, t.announceIdle, s)
		f := v.WatermarkFn
		g.Punct = record.NewPunctuator(f.Module, f.Function, f.Index, b.pool(v.ID, i, f), b.j.Plan.Job.UDF.BatchSize, policy)
	default:
		g = watermark.NewGenerator(watermark.Bounded, w.MaxOutOfOrderness.Milliseconds(), interval, idle, t.announceIdle, s)
	}
	t.time.gen = g
	return b.timestampStage(t, v, i, policy, g)
}

// timestampStage puts the source's timestamp assigner, if any, in front of
// next.
func (b *builder) timestampStage(t *Task, v *plan.Vertex, i int, policy *operator.ErrorPolicy, next operator.Stage) operator.Stage {
	if ts := v.Source.Timestamp; ts != nil && ts.Field != "" {
		return record.TimestampField(ts.Field, policy, next)
	}
	if v.Fn != nil {
		return b.wasmStage(t, v.ID, i, v.Fn, abi.KindTimestamp, policy, next)
	}
	return next
}

// pool makes an instance pool of f's module for subtask i of a vertex.
func (b *builder) pool(vertexID string, i int, f *plan.Func) *host.Guest {
	limits := b.j.Plan.Job.UDF
	return b.module(f).NewGuest(host.InstanceConfig{
		MemoryLimit: limits.MemoryLimit,
		CallTimeout: limits.CallTimeout.Duration,
		Attrs:       []slog.Attr{slog.String("job", b.j.ID), slog.String("vertex", vertexID), slog.Int("subtask", i)},
	})
}

// windowStage builds the window operator of v for subtask i in front of
// next, with its late records and side outputs.
func (b *builder) windowStage(ctx context.Context, t *Task, v *plan.Vertex, i int, c *Counters, policy *operator.ErrorPolicy, next operator.Stage) (operator.Stage, error) {
	cfg := window.Config{Vertex: v.ID, Plan: v.Window, BatchSize: b.j.Plan.Job.UDF.BatchSize, Budget: b.j.Env.Budgets.WindowContents, Policy: policy, Next: next, LateCount: &c.Late,
		Clock: t.clockFunc()}
	if v.Window.States {
		keyed, err := b.keyedState(t, v, i, v.Fn)
		if err != nil {
			return nil, err
		}
		cfg.State, cfg.States = keyed, len(b.module(v.Fn).Description.States)
	}
	late, sides, err := b.sideOutputs(ctx, t, v, i)
	if err != nil {
		if cfg.State != nil {
			err = errors.Join(err, cfg.State.Close())
		}
		return nil, err
	}
	cfg.Late, cfg.Sides = late, sides
	if v.Window.Builtin == "" {
		cfg.Fn = b.groupCall(v.ID, i, v.Fn)
	}
	cfg.GapFn = b.groupCall(v.ID, i, v.Window.GapFn)
	if tr := v.Window.Trigger; tr != nil {
		cfg.TriggerFn = b.groupCall(v.ID, i, tr.Fn)
	}
	if e := v.Window.Evictor; e != nil {
		cfg.EvictorFn = b.groupCall(v.ID, i, e.Fn)
	}
	return window.New(cfg), nil
}

// groupCall makes the grouped call of f for subtask i of a vertex; nil
// without f.
func (b *builder) groupCall(vertexID string, i int, f *plan.Func) *operator.GroupCall {
	if f == nil {
		return nil
	}
	return &operator.GroupCall{Module: f.Module, Function: f.Function, Fn: f.Index, Guest: b.pool(vertexID, i, f)}
}

// sourceSplits tells a source's watermark generator how many splits its
// subtask reads.
func (t *Task) sourceSplits() {
	if t.time.gen == nil {
		return
	}
	n := 1
	if ss, ok := t.source.(connector.SplitSource); ok {
		n = ss.Splits()
	}
	t.time.gen.SetSplits(n)
}
