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
		epochs, err := b.restore.epochs(ctx, v.ID, i, v.Parallelism)
		if err == nil && len(epochs) > 0 {
			var st connector.ObjectStats
			st, err = sink.Recover(ctx, epochs)
			b.j.Log.Info("sink recovered staged objects", "vertex", v.ID, "subtask", i, "parts", len(epochs),
				"written", st.Written, "kept", st.Kept)
		}
		if err != nil {
			_ = sink.Close()
			return nil, fmt.Errorf("sink %s: recover staged objects: %w", v.ID, err)
		}
	}
	t.cp.add(s)
	return s, nil
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
