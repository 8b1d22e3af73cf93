package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/exchange"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/state"
)

// builder turns a plan into tasks: one per chain head and subtask.
type builder struct {
	j     *job
	edges map[*edge]*exchange.Edge
	// budget bounds the memory of the job's keyed state (state.go).
	budget *state.Budget
	// run is the run's checkpointing, nil when the job takes no
	// checkpoints; restore is what the run restores, nil for nothing.
	run     *checkpointRun
	restore *restoreSet
}

// build creates every task of the job, restoring their state from restore
// (when not nil). On failure it releases what it made.
func (j *job) build(ctx context.Context, run *checkpointRun, restore *restoreSet) (tasks []*task, err error) {
	b := &builder{j: j, edges: map[*edge]*exchange.Edge{}, run: run, restore: restore}
	cfg := exchange.Config{BufferTimeout: j.plan.job.BufferTimeout.Duration}
	for _, v := range j.plan.vertices {
		for _, e := range v.out {
			if !e.chained() {
				b.edges[e] = exchange.NewEdge(cfg, e.from.parallelism, e.to.parallelism)
			}
		}
	}
	defer func() {
		if err != nil {
			for _, t := range tasks {
				_ = t.close()
			}
			tasks = nil
		}
	}()
	for _, v := range j.plan.vertices {
		if len(v.in) == 1 && v.in[0].chained() {
			continue
		}
		for i := 0; i < v.parallelism; i++ {
			t, err := b.task(ctx, v, i)
			if t != nil {
				tasks = append(tasks, t)
			}
			if err != nil {
				return tasks, fmt.Errorf("task %s[%d]: %w", v.id, i, err)
			}
		}
	}
	return tasks, nil
}

// task builds subtask i of the chain headed by v. It returns the task even on
// error so that the caller can release what was made.
func (b *builder) task(ctx context.Context, v *vertex, i int) (*task, error) {
	job := b.j.plan.job
	t := &task{name: v.id, subtask: i, batchSize: job.UDF.BatchSize, log: b.j.log.With("vertex", v.id, "subtask", i)}
	b.checkpointTask(t, v)
	if job.OnUDFError == operator.OnErrorDeadLetter {
		sink, err := connector.NewJetStreamSink(ctx, b.j.mgr.cfg.JetStream, connector.JetStreamSinkConfig{Subject: job.DeadLetter})
		if err != nil {
			return t, fmt.Errorf("dead_letter_subject: %w", err)
		}
		t.dlq = &sinkStage{sink: sink}
	}
	chain, err := b.vertexStage(ctx, t, v, i)
	t.chain = chain
	if err != nil {
		return t, err
	}
	if v.source != nil {
		t.source, err = b.source(ctx, v, i)
		if err == nil {
			t.sourceSplits()
			b.checkpointSource(t, v, i)
			err = b.checkpointWatermarks(ctx, t, v, i)
		}
		return t, err
	}
	var channels [][]*exchange.InputChannel
	for _, e := range v.in {
		channels = append(channels, b.edges[e].Channels(i))
	}
	t.gate = exchange.NewGate(exchange.Config{BufferTimeout: job.BufferTimeout.Duration}, channels...)
	b.checkpointGate(t)
	return t, nil
}

func (b *builder) source(ctx context.Context, v *vertex, i int) (connector.Source, error) {
	s := v.source
	if s.Generator != nil {
		return b.generator(ctx, v, i)
	}
	js := b.j.mgr.cfg.JetStream
	cfg := connector.JetStreamSourceConfig{
		Stream: s.JetStream.Stream, Subjects: s.JetStream.Subjects, Bounded: s.JetStream.Bounded,
		Subtask: i, Parallelism: v.parallelism,
	}
	if cfg.Bounded {
		end, err := b.j.boundedEnd(v.id, func() (map[string]uint64, error) {
			return connector.BoundedEnd(ctx, js, cfg.Stream, cfg.Subjects)
		})
		if err != nil {
			return nil, err
		}
		cfg.End = end
	}
	start, err := b.startPositions(ctx, v, cfg.Stream)
	if err != nil {
		return nil, err
	}
	cfg.Start = start
	src, err := connector.NewJetStreamSource(ctx, js, cfg)
	if err != nil {
		// A nil *JetStreamSource in a Source would not be nil.
		return nil, err
	}
	return src, nil
}

// vertexStage builds the stages of vertex v in subtask i, followed by
// whatever consumes its output.
func (b *builder) vertexStage(ctx context.Context, t *task, v *vertex, i int) (operator.Stage, error) {
	c := b.j.counters[v.id][i]
	t.stats.vertices = append(t.stats.vertices, b.vertexClock(v, i))
	policy := b.policy(t, v.id, c)
	out, err := b.outputs(ctx, t, v, i)
	if err != nil {
		return nil, err
	}
	var s operator.Stage = &operator.Meter{Count: &c.out, Watermark: &c.watermark, Next: out}
	switch {
	case v.source != nil:
		s = b.sourceStages(t, v, i, policy, s)
	case v.sink != nil:
		sink, err := b.sink(ctx, t, v, i)
		if err != nil {
			return nil, err
		}
		s = throttled(v.sink.Throttle, v.parallelism, &operator.Meter{Count: &c.out, Watermark: &c.watermark, Next: sink})
	case v.kind == string(abi.KindProcess):
		if s, err = b.processStage(t, v, i, policy, s); err != nil {
			return nil, errors.Join(err, out.Close(ctx))
		}
	case v.join != nil:
		if s, err = b.joinStage(ctx, t, v, i, c, policy, s); err != nil {
			return nil, errors.Join(err, out.Close(ctx))
		}
	case v.win != nil:
		if s, err = b.windowStage(ctx, t, v, i, c, policy, s); err != nil {
			return nil, errors.Join(err, out.Close(ctx))
		}
	default:
		s = b.wasmStage(t, v.id, i, v.fn, abi.Kind(v.kind), policy, s)
	}
	if err := b.checkpointStage(ctx, t, v, i, s); err != nil {
		return nil, errors.Join(err, s.Close(ctx))
	}
	return &inMeter{c: c, next: s}, nil
}

func (b *builder) sink(ctx context.Context, t *task, v *vertex, i int) (operator.Stage, error) {
	if v.sink.Discard {
		return operator.Discard{}, nil
	}
	if b.run != nil && b.run.exactlyOnce {
		return b.txSink(ctx, t, v, i)
	}
	js := v.sink.JetStream
	sink, err := connector.NewJetStreamSink(ctx, b.j.mgr.cfg.JetStream, connector.JetStreamSinkConfig{Subject: js.Subject, MaxInFlight: js.MaxInFlight})
	if err != nil {
		return nil, err
	}
	return &sinkStage{sink: sink}, nil
}

// outputs builds what follows vertex v: chained vertices called directly, and
// exchange writers (after key selection for hash edges) for the others.
func (b *builder) outputs(ctx context.Context, t *task, v *vertex, i int) (operator.Stage, error) {
	var outs operator.Fanout
	for _, e := range v.out {
		if e.late {
			continue
		}
		if e.chained() {
			s, err := b.vertexStage(ctx, t, e.to, i)
			if err != nil {
				return nil, errors.Join(err, outs.Close(ctx))
			}
			outs = append(outs, s)
			continue
		}
		w := b.edges[e].Writer(i)
		t.writers = append(t.writers, w)
		var s operator.Stage = &exchangeOut{writer: w, part: b.partitioner(e, i), broadcast: e.ship == shipBroadcast, channels: e.to.parallelism}
		if e.ship == shipHash {
			policy := b.policy(t, e.to.id, b.j.counters[v.id][i])
			if e.keyFn != nil {
				s = b.wasmStage(t, e.to.id, i, e.keyFn, abi.KindKey, policy, s)
			} else {
				s = &fieldExtract{field: e.keyField, policy: policy, next: s}
			}
		}
		outs = append(outs, s)
	}
	switch len(outs) {
	case 0:
		return operator.Discard{}, nil
	case 1:
		return outs[0], nil
	}
	return outs, nil
}

func (b *builder) partitioner(e *edge, producer int) exchange.Partitioner {
	switch e.ship {
	case shipHash:
		return exchange.NewKeyGroups(b.j.plan.job.MaxParallelism, e.to.parallelism)
	case shipRebalance:
		return exchange.NewRebalance(e.to.parallelism, producer)
	}
	return exchange.Forward(producer)
}

func (b *builder) policy(t *task, vertexID string, c *counters) *operator.ErrorPolicy {
	log := b.j.log.With("vertex", vertexID, "subtask", t.subtask)
	return &operator.ErrorPolicy{Mode: b.j.plan.job.OnUDFError, Vertex: vertexID, DeadLetter: t.dlq, Counts: &c.ErrorCounts, Log: log}
}

func (b *builder) wasmStage(t *task, vertexID string, i int, f *funcRef, kind abi.Kind, policy *operator.ErrorPolicy, next operator.Stage) operator.Stage {
	limits := b.j.plan.job.UDF
	pool := f.module.mod.NewGuest(host.InstanceConfig{
		MemoryLimit: limits.MemoryLimit,
		CallTimeout: limits.CallTimeout.Duration,
		Attrs:       []slog.Attr{slog.String("job", b.j.id), slog.String("vertex", vertexID), slog.Int("subtask", i)},
	})
	return &wasmOp{
		kind: kind, module: f.module.id, function: f.name, fn: f.index, pool: t.stats.meter(vertexID, f.name, pool),
		batchSize: limits.BatchSize, policy: policy, next: next,
	}
}
