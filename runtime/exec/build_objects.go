package exec

import (
	"context"
	"fmt"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
)

// objectSink builds subtask i of the object store sink v, which the spec
// allows only with checkpoints: its parts are sealed at each barrier and
// written once the checkpoint completes (connector.ObjectSink), and the
// parts the restored checkpoint holds are written before the task starts.
func (b *builder) objectSink(ctx context.Context, t *Task, v *plan.Vertex, i int) (operator.Stage, error) {
	if t.cp == nil {
		return nil, fmt.Errorf("sink %s: an object store sink needs checkpoints", v.ID)
	}
	o := v.Sink.ObjectStore
	sink, err := connector.NewObjectSink(ctx, b.j.Env.JetStream, connector.ObjectSinkConfig{
		Bucket: o.Bucket, Prefix: o.Prefix, Writer: fmt.Sprintf("%s.%s.%d", b.j.ID, v.ID, i), Subtask: i,
		RollBytes: o.RollBytes, RollInterval: o.RollInterval.Duration,
		Budget: b.j.Env.Budgets.SinkStaging, SpillDir: b.spillDir(),
	})
	if err != nil {
		return nil, fmt.Errorf("sink %s: %w", v.ID, err)
	}
	s := &objectSinkStage{stagingStage: stagingStage{name: blobName(blobSink, v.ID, i), staging: sink}, sink: sink}
	if b.restore != nil {
		epochs, replays, err := b.restore.sinkStates(ctx, v.ID, i, v.Parallelism)
		if err == nil && len(epochs) > 0 {
			var st connector.ObjectStats
			st, err = sink.Recover(ctx, epochs)
			b.j.Log.Info("sink recovered staged objects", "vertex", v.ID, "subtask", i, "parts", len(epochs),
				"written", st.Written, "kept", st.Kept)
		}
		if err == nil {
			err = b.skipCommittedObjects(ctx, v.ID, i, sink, replays)
		}
		if err != nil {
			_ = sink.Close()
			return nil, fmt.Errorf("sink %s: recover staged objects: %w", v.ID, err)
		}
	}
	t.cp.add(s)
	return s, nil
}

// skipCommittedObjects makes subtask i of object store sink vertex drop from
// the replay the records of the objects it wrote for checkpoints a fallback
// passed over, and those an earlier fallback's replay had not produced again
// when the restored checkpoint was taken: their objects stay, and the
// replay must not write the records into others.
func (b *builder) skipCommittedObjects(ctx context.Context, vertex string, i int, sink *connector.ObjectSink, replays []*connector.Replay) error {
	n, err := sink.KeepSkipping(replays)
	if err != nil {
		return fmt.Errorf("go on dropping the output committed before an earlier fallback: %w", err)
	}
	if n > 0 {
		b.j.Log.Info("sink goes on dropping committed output from the replay", "vertex", vertex, "subtask", i,
			"checkpoint", b.restore.meta.ID, "records", n)
	}
	if !b.restore.fellBack {
		return nil
	}
	after := b.restore.skipAfter
	if n, err = sink.SkipCommitted(ctx, after); err != nil {
		return fmt.Errorf("drop the output committed after checkpoint %d: %w", after, err)
	}
	b.j.Log.Info("sink drops committed output from the replay", "vertex", vertex, "subtask", i,
		"after_checkpoint", after, "records", n)
	return nil
}

// objectSinkStage is an object store sink subtask: records are staged and
// written as objects when the checkpoint after them completes.
type objectSinkStage struct {
	stagingStage
	sink *connector.ObjectSink
}

// commit writes the objects on the task's goroutine: the task goes on once
// they are written.
func (s *objectSinkStage) commit(ctx context.Context, id int64) error {
	_, err := s.sink.Commit(ctx, id)
	return err
}

func (s *objectSinkStage) staged() bool                { return s.sink.Staged() }
func (s *objectSinkStage) flush(context.Context) error { return nil }
