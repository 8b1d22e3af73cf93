package exec

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
)

// checkpointTask gives a task its side of checkpointing when the job takes
// checkpoints; checkpointGate sizes its aligner once its gate exists.
func (b *builder) checkpointTask(t *Task, v *plan.Vertex) {
	if b.run != nil {
		t.cp = newTaskCheckpoint(b.run, taskID(t), v.Source != nil)
		t.cp.restore = b.restore
	}
}

func (b *builder) checkpointGate(t *Task) {
	if t.cp != nil {
		t.cp.align = newAligner(t.gate.NumChannels(), b.run.exactlyOnce)
	}
}

// checkpointSource makes a source subtask's positions part of its task's
// checkpoints.
func (b *builder) checkpointSource(t *Task, v *plan.Vertex, i int) {
	if t.cp == nil {
		return
	}
	if p, ok := t.source.(positioned); ok {
		t.cp.add(&sourcePart{name: blobName(blobPositions, v.ID, i), src: p})
	}
}

// startPositions are where a JetStream source resumes: the restored
// checkpoint's positions of every filter, checked against the stream.
func (b *builder) startPositions(ctx context.Context, v *plan.Vertex, stream string) (map[string]uint64, error) {
	if b.restore == nil {
		return nil, nil
	}
	pos, err := b.restore.positions(ctx, v.ID)
	if err != nil {
		return nil, err
	}
	if err := b.restore.checkPositions(ctx, b.j.Env.JetStream, v.ID, stream, pos); err != nil {
		return nil, err
	}
	return pos, nil
}

// checkpointStage makes a stateful stage of vertex v part of its task's
// checkpoints and restores its state.
func (b *builder) checkpointStage(ctx context.Context, t *Task, v *plan.Vertex, i int, s operator.Stage) error {
	if t.cp == nil {
		return nil
	}
	if b.restore != nil {
		if err := b.j.fault(FaultRestore, t.cp.name); err != nil {
			return err
		}
	}
	op, ok := s.(operator.Stateful)
	if !ok {
		return nil
	}
	kind := op.StateKind()
	t.cp.add(&statefulPart{name: blobName(kind, v.ID, i), op: op})
	if b.restore == nil {
		return nil
	}
	srcs, err := b.restore.readers(ctx, kind, v.ID)
	if err != nil {
		return err
	}
	job := b.j.Plan.Job
	if err := op.Restore(ctx, srcs, job.MaxParallelism, state.RangeOf(job.MaxParallelism, v.Parallelism, i)); err != nil {
		return b.restore.fail(err)
	}
	return nil
}

// txSink builds subtask i of an exactly-once JetStream sink, committing the
// epochs the restored checkpoint holds before the task starts.
func (b *builder) txSink(ctx context.Context, t *Task, v *plan.Vertex, i int) (operator.Stage, error) {
	js := v.Sink.JetStream
	prefix := fmt.Sprintf("%s.%s.%d", b.j.ID, v.ID, i)
	fence, err := b.fence(ctx, prefix, js.Subject)
	if err != nil {
		return nil, fmt.Errorf("sink %s: %w", v.ID, err)
	}
	sink, err := connector.NewTxSink(ctx, b.j.Env.JetStream, connector.TxSinkConfig{
		Subject: js.Subject, Prefix: prefix, MaxInFlight: js.MaxInFlight,
		SpillDir: b.spillDir(), Budget: b.j.Env.Budgets.SinkStaging, Fence: fence,
	})
	if err != nil {
		return nil, err
	}
	return b.stagedSink(ctx, t, v, i, sink)
}

// stagedSink makes subtask i of the transactional sink v part of its task's
// checkpoints, committing the epochs the restored checkpoint holds before
// the task starts.
func (b *builder) stagedSink(ctx context.Context, t *Task, v *plan.Vertex, i int, sink *connector.TxSink) (operator.Stage, error) {
	s := newTxSinkStage(blobName(blobSink, v.ID, i), sink)
	t.cp.add(s)
	if b.restore == nil {
		return s, nil
	}
	epochs, replays, err := b.restore.sinkStates(ctx, v.ID, i, v.Parallelism)
	if err == nil && len(epochs) > 0 {
		var st connector.RecoverStats
		st, err = sink.Recover(ctx, epochs, b.restore.restoredAt())
		b.j.Log.Info("sink recovered staged output", "vertex", v.ID, "subtask", i, "epochs", st.Epochs,
			"published", st.Published, "skipped", st.Skipped, "read_back", st.ReadBack)
	}
	if err != nil {
		return nil, fmt.Errorf("sink %s: recover staged output: %w", v.ID, err)
	}
	if err := b.keepSkipping(v.ID, i, sink, replays); err != nil {
		return nil, fmt.Errorf("sink %s: %w", v.ID, err)
	}
	if err := b.skipCommitted(ctx, v.ID, i, sink); err != nil {
		return nil, fmt.Errorf("sink %s: %w", v.ID, err)
	}
	return s, nil
}

// keepSkipping makes subtask i of sink vertex go on dropping the committed
// records that an earlier fallback's replay had not produced again when
// the restored checkpoint was taken: a second failure during that replay
// must not publish them again.
func (b *builder) keepSkipping(vertex string, i int, sink *connector.TxSink, replays []*connector.Replay) error {
	n, err := sink.KeepSkipping(replays)
	if err != nil {
		return fmt.Errorf("go on dropping the output committed before an earlier fallback: %w", err)
	}
	if n > 0 {
		b.j.Log.Info("sink goes on dropping committed output from the replay", "vertex", vertex, "subtask", i,
			"checkpoint", b.restore.meta.ID, "records", n)
	}
	return nil
}

// skipCommitted, after a fallback past corrupt checkpoints, makes subtask i
// of sink vertex drop from the replay what the newer checkpoints' epochs
// committed: all the job's epochs when the fallback is to the savepoint of
// another job it was submitted from.
func (b *builder) skipCommitted(ctx context.Context, vertex string, i int, sink *connector.TxSink) error {
	if b.restore == nil || !b.restore.fellBack {
		return nil
	}
	after := b.restore.skipAfter
	n, err := sink.SkipCommitted(ctx, after, b.restore.restoredAt())
	if err != nil {
		return fmt.Errorf("drop the output committed after checkpoint %d: %w", after, err)
	}
	b.j.Log.Info("sink drops committed output from the replay", "vertex", vertex, "subtask", i,
		"after_checkpoint", after, "records", n)
	return nil
}

// fence is the fencing token a transactional sink subtask with message id
// prefix commits to subject under, in cluster mode; nil otherwise.
func (b *builder) fence(ctx context.Context, prefix, subject string) (*connector.Fence, error) {
	if b.j.SinkFence == nil {
		return nil, nil
	}
	return b.j.SinkFence(ctx, prefix, subject)
}

// txDeadLetters builds the dead-letter sink of subtask i of the task headed
// by v in an exactly-once job: a transactional sink, like txSink's, that
// stages the task's dead letters with its checkpoints and publishes them
// with ids of their own, <job>.$dlq.<task>.<subtask>.<checkpoint>.<index>,
// once the checkpoint after them completes. The dead letters the restored
// checkpoint holds are committed before the task starts.
func (b *builder) txDeadLetters(ctx context.Context, t *Task, v *plan.Vertex, i int) (operator.Stage, error) {
	prefix := deadLetterPrefix(b.j.ID, v.ID, i)
	fence, err := b.fence(ctx, prefix, b.j.Plan.Job.DeadLetter)
	if err != nil {
		return nil, fmt.Errorf("dead letters: %w", err)
	}
	sink, err := connector.NewTxSink(ctx, b.j.Env.JetStream, connector.TxSinkConfig{
		Subject: b.j.Plan.Job.DeadLetter, Prefix: prefix,
		SpillDir: b.spillDir(), Budget: b.j.Env.Budgets.SinkStaging, Fence: fence,
	})
	if err != nil {
		return nil, err
	}
	if b.restore != nil {
		epochs, replays, err := b.deadLetterEpochs(ctx, v, i)
		if err == nil && len(epochs) > 0 {
			var st connector.RecoverStats
			st, err = sink.Recover(ctx, epochs, b.restore.restoredAt())
			b.j.Log.Info("dead letters recovered", "vertex", v.ID, "subtask", i, "epochs", st.Epochs,
				"published", st.Published, "skipped", st.Skipped, "read_back", st.ReadBack)
		}
		if err == nil {
			err = b.keepSkipping("dead letters of "+v.ID, i, sink, replays)
		}
		if err == nil {
			err = b.skipCommitted(ctx, "dead letters of "+v.ID, i, sink)
		}
		if err != nil {
			_ = sink.Close()
			return nil, fmt.Errorf("recover staged dead letters: %w", err)
		}
	}
	s := newTxSinkStage(deadLetterBlob(v.ID, i), sink)
	t.cp.add(s)
	return s, nil
}

// deadLetterEpochs are the staged dead letters that subtask i of the task
// headed by v commits on a restore: those of the old subtasks j of that task
// with j % parallelism == i, and, for subtask 0 of the job's first task,
// those of tasks the job no longer has (a savepoint restored into a job whose
// chains changed). Each old task's dead letters are so committed by exactly
// one new subtask, and none is dropped; with them go the records their
// replays after a fallback were still to drop (connector.TxSink.KeepSkipping).
func (b *builder) deadLetterEpochs(ctx context.Context, v *plan.Vertex, i int) ([]*connector.Epoch, []*connector.Replay, error) {
	heads := map[string]*plan.Vertex{}
	var first *plan.Vertex
	for _, u := range b.j.Plan.Vertices {
		if len(u.In) == 1 && u.In[0].Chained() {
			continue
		}
		heads[u.ID] = u
		if first == nil {
			first = u
		}
	}
	var names []string
	for name := range b.restore.meta.Blobs {
		head, j, ok := parseDeadLetterBlob(name)
		if !ok {
			continue
		}
		if h := heads[head]; h != nil {
			if h != v || j%v.Parallelism != i {
				continue
			}
		} else if v != first || i != 0 {
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	var (
		out     []*connector.Epoch
		replays []*connector.Replay
	)
	for _, name := range names {
		data, err := b.restore.read(ctx, b.restore.meta.Blobs[name])
		if err != nil {
			return nil, nil, err
		}
		es, replay, err := connector.DecodeSinkState(data)
		if err != nil {
			return nil, nil, b.restore.fail(fmt.Errorf("%s: %w", name, err))
		}
		out = append(out, es...)
		replays = append(replays, replay)
	}
	return out, replays, nil
}

// spillDir holds the files of staged output past a sink's memory budget.
func (b *builder) spillDir() string {
	if b.j.Env.DataDir == "" {
		return ""
	}
	return filepath.Join(b.j.Env.DataDir, "spill")
}
