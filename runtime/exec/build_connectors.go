package exec

import (
	"context"
	"errors"
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
)

// kvSource builds subtask i of the KV source v: a JetStream source over the
// bucket's stream (connector.NewKVSource), resuming from the restored
// positions; a bounded one ends where the job fixed its end when it first
// started.
func (b *builder) kvSource(ctx context.Context, v *plan.Vertex, i int) (connector.Source, error) {
	kv := v.Source.KV
	js := b.j.Env.JetStream
	cfg := connector.KVSourceConfig{
		Bucket: kv.Bucket, Keys: kv.Keys, Bounded: kv.Bounded, Subtask: i, Parallelism: v.Parallelism, Name: v.ID,
	}
	if cfg.Bounded {
		end, err := b.j.BoundedEnd(v.ID, func() (map[string]uint64, error) {
			return connector.KVBoundedEnd(ctx, js, kv.Bucket, kv.Keys)
		})
		if err != nil {
			return nil, err
		}
		cfg.End = end
	}
	start, err := b.startPositions(ctx, v, connector.KVStream(kv.Bucket))
	if err != nil {
		return nil, err
	}
	cfg.Start = start
	src, err := connector.NewKVSource(ctx, js, cfg)
	if err != nil {
		return nil, err
	}
	return src, nil
}

// kvSink builds subtask i of the KV sink v: transactional in an
// exactly-once job (connector.NewKVTxSink, fenced in cluster mode like a
// JetStream sink), writing at once otherwise. A record it cannot write (a
// key that is no KV key, an unknown Platform-Op) goes through on_udf_error.
func (b *builder) kvSink(ctx context.Context, t *Task, v *plan.Vertex, i int) (operator.Stage, error) {
	kv := v.Sink.KV
	js := b.j.Env.JetStream
	check := &kvCheck{policy: b.policy(t, v.ID, b.j.Counters[v.ID][i])}
	if b.run == nil || !b.run.exactlyOnce {
		sink, err := connector.NewKVSink(ctx, js, connector.KVSinkConfig{Bucket: kv.Bucket, MaxInFlight: kv.MaxInFlight})
		if err != nil {
			return nil, fmt.Errorf("sink %s: %w", v.ID, err)
		}
		check.next = &sinkStage{sink: sink}
		return check, nil
	}
	prefix := fmt.Sprintf("%s.%s.%d", b.j.ID, v.ID, i)
	fence, err := b.fence(ctx, prefix, connector.KVFilter(kv.Bucket, ""))
	if err != nil {
		return nil, fmt.Errorf("sink %s: %w", v.ID, err)
	}
	sink, err := connector.NewKVTxSink(ctx, js, connector.KVTxSinkConfig{
		Bucket: kv.Bucket, Prefix: prefix, MaxInFlight: kv.MaxInFlight,
		SpillDir: b.spillDir(), Budget: b.j.Env.Budgets.SinkStaging, Fence: fence,
	})
	if err != nil {
		return nil, fmt.Errorf("sink %s: %w", v.ID, err)
	}
	staged, err := b.stagedSink(ctx, t, v, i, sink)
	if err != nil {
		return nil, errors.Join(err, sink.Close())
	}
	check.next = staged
	return check, nil
}

// kvCheck passes on the records a KV sink can write and hands the others
// to the error policy.
type kvCheck struct {
	policy *operator.ErrorPolicy
	next   operator.Stage
	ok     []abi.Record
}

func (c *kvCheck) Process(ctx context.Context, recs []abi.Record) error {
	c.ok = c.ok[:0]
	for i := range recs {
		if err := connector.CheckKVRecord(&recs[i]); err != nil {
			if err := c.policy.RecordFailed(ctx, &recs[i], err); err != nil {
				return err
			}
			continue
		}
		c.ok = append(c.ok, recs[i])
	}
	if len(c.ok) == 0 {
		return nil
	}
	return c.next.Process(ctx, c.ok)
}

func (c *kvCheck) Advance(ctx context.Context, wm int64) error { return c.next.Advance(ctx, wm) }
func (c *kvCheck) Tick(ctx context.Context, now int64) error   { return c.next.Tick(ctx, now) }
func (c *kvCheck) Finish(ctx context.Context) error            { return c.next.Finish(ctx) }
func (c *kvCheck) Close(ctx context.Context) error             { return c.next.Close(ctx) }

// natsSource builds a subtask of the core NATS source v. Its subtasks
// subscribe in the spec's queue group, or, with more than one and none
// named, in one of their own (<job>.<source>), so that each message reaches
// one of them.
func (b *builder) natsSource(v *plan.Vertex) (connector.Source, error) {
	n := v.Source.NATS
	queue := n.Queue
	if queue == "" && v.Parallelism > 1 {
		queue = b.j.ID + "." + v.ID
	}
	src, err := connector.NewNATSSource(b.j.Env.JetStream.Conn(), connector.NATSSourceConfig{Subject: n.Subject, Queue: queue})
	if err != nil {
		return nil, err
	}
	return src, nil
}

// natsSink builds a subtask of the core NATS sink v.
func (b *builder) natsSink(v *plan.Vertex) (operator.Stage, error) {
	sink, err := connector.NewNATSSink(b.j.Env.JetStream.Conn(), v.Sink.NATS.Subject)
	if err != nil {
		return nil, fmt.Errorf("sink %s: %w", v.ID, err)
	}
	return &sinkStage{sink: sink}, nil
}
