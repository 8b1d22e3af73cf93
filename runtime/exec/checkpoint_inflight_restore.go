package exec

import (
	"context"
	"fmt"
	"sort"

	"wasmstream.io/platform/abi"
)

// inFlight reads and checks the in-flight data of subtask i of the task
// headed by vertex; nil when the checkpoint has none. Unaligned checkpoints
// are restored with the parallelism they were taken with, so a blob of a
// subtask the vertex no longer has is an error, not state to drop.
func (r *RestoreSet) inFlight(ctx context.Context, vertex string, i, parallelism int) (*inFlightData, error) {
	blobs := r.blobs(blobInFlight, vertex)
	var beyond []int
	for j := range blobs {
		if j >= parallelism {
			beyond = append(beyond, j)
		}
	}
	if len(beyond) > 0 {
		sort.Ints(beyond)
		return nil, r.fail(fmt.Errorf("operator %q: in-flight data of subtasks %v, but its parallelism is %d now "+
			"(an unaligned checkpoint is restored with the parallelism it was taken with; rescale from a savepoint)", vertex, beyond, parallelism))
	}
	b, ok := blobs[i]
	if !ok {
		return nil, nil
	}
	data, err := r.read(ctx, b)
	if err != nil {
		return nil, err
	}
	d, err := decodeInFlight(data)
	if err != nil {
		return nil, r.fail(fmt.Errorf("operator %q subtask %d: %w", vertex, i, err))
	}
	return d, nil
}

// replayInFlight replays the in-flight data of the checkpoint the run
// restores before the task takes anything new: first the output its
// barriers overtook, to the channels it was queued on, then the input that
// arrived before its barriers, through the chain as if from the same
// channels. Channel by channel, that is the order the data had.
func (t *Task) replayInFlight(ctx context.Context) error {
	if t.cp == nil || t.cp.restore == nil {
		return nil
	}
	r := t.cp.restore
	d, err := r.inFlight(ctx, t.name, t.subtask, t.cp.run.j.Plan.Vertex(t.name).Parallelism)
	if err != nil || d == nil {
		return err
	}
	if shape := t.inFlightShape(); !d.shape.equal(shape) {
		return r.fail(fmt.Errorf("task %s: in-flight data recorded with %s, the task has %s", taskID(t), d.shape, shape))
	}
	var (
		ir   abi.InputReader
		recs []abi.Record
	)
	for _, en := range d.entries {
		if en.writer < 0 {
			continue
		}
		_ = ir.Reset(en.frame)
		var rec abi.Record
		for ir.Next(&rec) {
			if err := t.writers[en.writer].Emit(ctx, en.channel, &rec); err != nil {
				return fmt.Errorf("replay in-flight output: %w", err)
			}
		}
	}
	for _, en := range d.entries {
		if en.writer >= 0 {
			continue
		}
		_ = ir.Reset(en.frame)
		recs = recs[:0]
		for {
			recs = append(recs, abi.Record{})
			if !ir.Next(&recs[len(recs)-1]) {
				recs = recs[:len(recs)-1]
				break
			}
		}
		if t.inputs != nil {
			t.inputs.From(en.channel)
		}
		if err := t.chain.Process(ctx, recs); err != nil {
			return fmt.Errorf("replay in-flight input: %w", err)
		}
	}
	return nil
}
