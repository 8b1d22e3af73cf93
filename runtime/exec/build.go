package exec

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
	"wasmstream.io/platform/runtime/operator/record"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
)

// builder turns a plan into tasks: one per chain head and subtask.
type builder struct {
	j     *Job
	edges map[*plan.Edge]*exchange.Edge
	// budget bounds the memory of the job's keyed state (state.go).
	budget *state.Budget
	// run is the run's checkpointing, nil when the job takes no
	// checkpoints; restore is what the run restores, nil for nothing.
	run     *checkpointRun
	restore *RestoreSet
	// pl is the run's placement when its subtasks run on several
	// workers, else nil; leader is the link to the others when this is
	// the job's leader, and netFailed fails the run from a network
	// channel (remote_build.go). edgeOrder lists the exchange edges, to
	// name them alike on every worker.
	pl        *Placement
	leader    *leaderLink
	netFailed func(error)
	edgeOrder []*plan.Edge
	// scripted: the job's test stream moves processing time, and every
	// task runs on a scripted clock (scriptedtime.go).
	scripted bool
}

// build creates every task of the job, restoring their state from restore
// (when not nil). On failure it releases what it made.
func (j *Job) build(ctx context.Context, run *checkpointRun, restore *RestoreSet) (tasks []*Task, err error) {
	b := &builder{j: j, edges: map[*plan.Edge]*exchange.Edge{}, run: run, restore: restore, scripted: scriptsProcessingTime(j.Plan)}
	cfg := j.Env.Budgets.exchange(exchange.Config{BufferTimeout: j.Plan.Job.BufferTimeout.Duration})
	for _, v := range j.Plan.Vertices {
		for _, e := range v.Out {
			if !e.Chained() {
				b.edges[e] = exchange.NewEdge(cfg, e.From.Parallelism, e.To.Parallelism)
				b.edgeOrder = append(b.edgeOrder, e)
			}
		}
	}
	if err := b.place(ctx, restore); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			for _, t := range tasks {
				_ = t.close()
			}
			tasks = nil
		}
	}()
	for _, v := range j.Plan.Vertices {
		if len(v.In) == 1 && v.In[0].Chained() {
			continue
		}
		for i := 0; i < v.Parallelism; i++ {
			if !b.here(v, i) {
				if b.leader != nil {
					tasks = append(tasks, b.leader.stand(v.ID, i, b.pl.worker(v.ID, i)))
				}
				continue
			}
			t, err := b.task(ctx, v, i)
			if t != nil {
				tasks = append(tasks, t)
			}
			if err != nil {
				return tasks, fmt.Errorf("task %s[%d]: %w", v.ID, i, err)
			}
		}
	}
	return tasks, b.connect(tasks)
}

// task builds subtask i of the chain headed by v. It returns the task even on
// error so that the caller can release what was made.
func (b *builder) task(ctx context.Context, v *plan.Vertex, i int) (*Task, error) {
	job := b.j.Plan.Job
	t := &Task{name: v.ID, subtask: i, batchSize: job.UDF.BatchSize, log: b.j.Log.With("vertex", v.ID, "subtask", i)}
	if b.scripted {
		t.time.scripted = &scriptedClock{}
	}
	b.checkpointTask(t, v)
	if job.DeadLetter != "" {
		dlq, err := b.deadLetters(ctx, t, v, i)
		if err != nil {
			return t, fmt.Errorf("dead_letter_subject: %w", err)
		}
		t.dlq = dlq
	}
	chain, err := b.vertexStage(ctx, t, v, i)
	t.chain = chain
	if err != nil {
		return t, err
	}
	if v.Source != nil {
		t.source, err = b.source(ctx, v, i)
		if ts, ok := t.source.(*connector.TestStream); ok {
			ts.Advance = t.chain.Advance
			if t.time.scripted != nil {
				t.time.scripted.now.Store(ts.ProcessingTime())
				ts.SetProcessingTime = t.setProcessingTime
			}
		}
		if err == nil {
			t.sourceSplits()
			b.checkpointSource(t, v, i)
			err = b.checkpointWatermarks(ctx, t, v, i)
		}
		return t, err
	}
	var channels [][]*exchange.InputChannel
	for _, e := range v.In {
		channels = append(channels, b.edges[e].Channels(i))
	}
	t.gate = exchange.NewGate(b.j.Env.Budgets.exchange(exchange.Config{BufferTimeout: job.BufferTimeout.Duration}), channels...)
	b.checkpointGate(t)
	return t, nil
}

func (b *builder) source(ctx context.Context, v *plan.Vertex, i int) (connector.Source, error) {
	s := v.Source
	switch {
	case s.Generator != nil:
		return b.generator(ctx, v, i)
	case s.KV != nil:
		return b.kvSource(ctx, v, i) // build_connectors.go
	case s.NATS != nil:
		return b.natsSource(v)
	case s.TestStream != nil:
		return b.testStream(ctx, v, i) // build_teststream.go
	}
	js := b.j.Env.JetStream
	cfg := connector.JetStreamSourceConfig{
		Stream: s.JetStream.Stream, Subjects: s.JetStream.Subjects, Bounded: s.JetStream.Bounded,
		Subtask: i, Parallelism: v.Parallelism, Name: v.ID, OnGap: s.JetStream.OnGap, Gap: b.sourceGap(v, i),
	}
	if cfg.Bounded {
		end, err := b.j.BoundedEnd(v.ID, func() (map[string]uint64, error) {
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

// sourceGap counts and logs a sequence gap subtask i of JetStream source v
// goes on past.
func (b *builder) sourceGap(v *plan.Vertex, i int) func(*connector.GapError) {
	c, log := b.j.Counters[v.ID][i], b.j.Log
	return func(g *connector.GapError) {
		c.Gaps.Add(1)
		log.Warn("source sequence gap skipped", "vertex", v.ID, "subtask", i, "stream", g.Stream, "filter", g.Filter,
			"after", g.After, "found", g.Found, "reason", g.Why)
	}
}

// vertexStage builds the stages of vertex v in subtask i, followed by
// whatever consumes its output.
func (b *builder) vertexStage(ctx context.Context, t *Task, v *plan.Vertex, i int) (operator.Stage, error) {
	v = b.canaryVertex(v, i) // canary.go
	c := b.j.Counters[v.ID][i]
	t.stats.vertices = append(t.stats.vertices, b.vertexClock(v, i))
	policy := b.policy(t, v.ID, c)
	q := b.quarantine(t, v, i, policy) // quarantine.go
	out, err := b.outputs(ctx, t, v, i)
	if err != nil {
		return nil, err
	}
	var s operator.Stage = &operator.Meter{Count: &c.Out, Watermark: &c.Watermark, Next: out}
	switch {
	case v.Source != nil:
		s = b.sourceStages(t, v, i, policy, s)
	case v.Sink != nil:
		sink, err := b.sink(ctx, t, v, i)
		if err != nil {
			return nil, err
		}
		s = throttled(v.Sink.Throttle, v.Parallelism, &operator.Meter{Count: &c.Out, Watermark: &c.Watermark, Next: sink})
	case v.Kind == string(abi.KindProcess):
		if s, err = b.processStage(ctx, t, v, i, policy, s); err != nil {
			return nil, errors.Join(err, out.Close(ctx))
		}
	case v.Broadcast != nil:
		if s, err = b.broadcastStage(t, v, i, policy, s); err != nil {
			return nil, errors.Join(err, out.Close(ctx))
		}
	case v.Join != nil:
		if s, err = b.joinStage(ctx, t, v, i, c, policy, s); err != nil {
			return nil, errors.Join(err, out.Close(ctx))
		}
	case v.Window != nil:
		if s, err = b.windowStage(ctx, t, v, i, c, policy, s); err != nil {
			return nil, errors.Join(err, out.Close(ctx))
		}
	case v.Op != nil && v.Op.AsyncLookup != nil:
		s = b.lookupStage(t, v, i, policy, s) // build_lookup.go
	case v.Op != nil && v.Op.Extract != nil:
		s = record.Extract(v.Op.Extract.Field, policy, s)
	default:
		s = b.wasmStage(t, v.ID, i, v.Fn, abi.Kind(v.Kind), policy, s)
	}
	if err := b.checkpointStage(ctx, t, v, i, s); err != nil {
		return nil, errors.Join(err, s.Close(ctx))
	}
	if q != nil {
		q.Next = s
		if err := b.checkpointStage(ctx, t, v, i, q); err != nil {
			return nil, errors.Join(err, s.Close(ctx))
		}
		s = q
	}
	return &inMeter{c: c, next: s}, nil
}

func (b *builder) sink(ctx context.Context, t *Task, v *plan.Vertex, i int) (operator.Stage, error) {
	if v.Sink.Print != nil {
		return b.printSink(v, i), nil
	}
	if v.Sink.Discard {
		return operator.Discard{}, nil
	}
	switch {
	case v.Sink.KV != nil:
		return b.kvSink(ctx, t, v, i) // build_connectors.go
	case v.Sink.NATS != nil:
		return b.natsSink(v)
	case v.Sink.ObjectStore != nil:
		return b.objectSink(ctx, t, v, i)
	}
	if b.run != nil && b.run.exactlyOnce {
		return b.txSink(ctx, t, v, i)
	}
	js := v.Sink.JetStream
	sink, err := connector.NewJetStreamSink(ctx, b.j.Env.JetStream, connector.JetStreamSinkConfig{Subject: js.Subject, MaxInFlight: js.MaxInFlight})
	if err != nil {
		return nil, err
	}
	return &sinkStage{sink: sink}, nil
}

// deadLetters builds the dead-letter sink of subtask i of the task headed by
// v: transactional in an exactly-once job, like its sinks, and otherwise a
// plain sink publishing each dead letter at once (at least once).
func (b *builder) deadLetters(ctx context.Context, t *Task, v *plan.Vertex, i int) (operator.Stage, error) {
	if b.run != nil && b.run.exactlyOnce {
		return b.txDeadLetters(ctx, t, v, i)
	}
	sink, err := connector.NewJetStreamSink(ctx, b.j.Env.JetStream, connector.JetStreamSinkConfig{Subject: b.j.Plan.Job.DeadLetter})
	if err != nil {
		return nil, err
	}
	return &sinkStage{sink: sink}, nil
}

// outputs builds what follows vertex v: chained vertices called directly, and
// exchange writers (after key selection for hash edges) for the others.
func (b *builder) outputs(ctx context.Context, t *Task, v *plan.Vertex, i int) (operator.Stage, error) {
	s, err := b.edgeStages(ctx, t, v, i, "")
	if err != nil {
		return nil, err
	}
	if s == nil {
		return operator.Discard{}, nil
	}
	return s, nil
}

// edgeStages builds the stages that receive what v writes to output side
// ("" for its main output): its edges carrying it, chained or through the
// exchange. Nil when it has none.
func (b *builder) edgeStages(ctx context.Context, t *Task, v *plan.Vertex, i int, side string) (operator.Stage, error) {
	var outs operator.Fanout
	for _, e := range v.Out {
		if e.Side != side {
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
		outs = append(outs, b.exchangeStage(t, v, e, i))
	}
	switch len(outs) {
	case 0:
		return nil, nil
	case 1:
		return outs[0], nil
	}
	return outs, nil
}

// exchangeStage writes subtask i's records of edge e, out of v, to the
// exchange: after key selection for a hash edge.
func (b *builder) exchangeStage(t *Task, v *plan.Vertex, e *plan.Edge, i int) operator.Stage {
	w := b.edges[e].Writer(i)
	t.writers = append(t.writers, w)
	var s operator.Stage = &exchangeOut{writer: w, part: b.partitioner(e, i), broadcast: e.Ship == plan.ShipBroadcast, channels: e.To.Parallelism,
		carriesTime: t.time.scripted != nil}
	if e.Ship == plan.ShipHash {
		policy := b.policy(t, e.To.ID, b.j.Counters[v.ID][i])
		switch {
		case e.KeyFn != nil:
			s = b.wasmStage(t, e.To.ID, i, e.KeyFn, abi.KindKey, policy, s)
		case e.KeyField != "":
			s = record.KeyField(e.KeyField, policy, s)
		}
	}
	return s
}

// module is the uploaded module a plan function belongs to. A job's modules
// cannot be deleted while it exists, so the lookup cannot fail once the job
// was submitted.
func (b *builder) module(f *plan.Func) *host.Module {
	m, _ := b.j.Env.Module(f.Module)
	return m
}

func (b *builder) partitioner(e *plan.Edge, producer int) exchange.Partitioner {
	switch e.Ship {
	case plan.ShipHash:
		return exchange.NewKeyGroups(b.j.Plan.Job.MaxParallelism, e.To.Parallelism)
	case plan.ShipRebalance:
		return exchange.NewRebalance(e.To.Parallelism, producer)
	}
	return exchange.Forward(producer)
}

func (b *builder) policy(t *Task, vertexID string, c *Counters) *operator.ErrorPolicy {
	log := b.j.Log.With("vertex", vertexID, "subtask", t.subtask)
	return &operator.ErrorPolicy{Mode: b.j.Plan.Job.OnUDFError.Policy, Vertex: vertexID, DeadLetter: t.dlq, Counts: &c.ErrorCounts, Log: log}
}

func (b *builder) wasmStage(t *Task, vertexID string, i int, f *plan.Func, kind abi.Kind, policy *operator.ErrorPolicy, next operator.Stage) operator.Stage {
	limits := b.j.Plan.Job.UDF
	pool := b.module(f).NewGuest(host.InstanceConfig{
		MemoryLimit: limits.MemoryLimit,
		CallTimeout: limits.CallTimeout.Duration,
		Attrs:       []slog.Attr{slog.String("job", b.j.ID), slog.String("vertex", vertexID), slog.Int("subtask", i)},
	})
	return record.NewFunction(kind, f.Module, f.Function, f.Index, t.stats.meter(vertexID, f.Function, pool), limits.BatchSize, policy, next)
}
