package exec

import (
	"context"
	"fmt"

	"wasmstream.io/platform/abi"
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
	s := &objectSinkStage{name: blobName(blobSink, v.ID, i), sink: sink}
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
	name string
	sink *connector.ObjectSink
}

func (s *objectSinkStage) Process(ctx context.Context, recs []abi.Record) error {
	return s.sink.Write(ctx, recs)
}

func (s *objectSinkStage) Advance(context.Context, int64) error { return nil }
func (s *objectSinkStage) Tick(context.Context, int64) error    { return nil }

// Finish keeps the staged records: the task writes them once a checkpoint
// holds them (taskCheckpoint.finishInput).
func (s *objectSinkStage) Finish(context.Context) error { return nil }
func (s *objectSinkStage) Close(context.Context) error  { return s.sink.Close() }

func (s *objectSinkStage) snapshot(_ context.Context, id int64) ([]operator.Blob, error) {
	if err := s.sink.Seal(id); err != nil {
		return nil, err
	}
	r, release, err := s.sink.Snapshot()
	if err != nil {
		return nil, err
	}
	return []operator.Blob{{Name: s.name, Reader: r, Release: release}}, nil
}

// commit writes the objects on the task's goroutine: the task goes on once
// they are written.
func (s *objectSinkStage) commit(ctx context.Context, id int64) error {
	_, err := s.sink.Commit(ctx, id)
	return err
}

func (s *objectSinkStage) staged() bool                { return s.sink.Staged() }
func (s *objectSinkStage) flush(context.Context) error { return nil }
