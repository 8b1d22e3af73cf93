package exec

import (
	"context"
	"fmt"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/runtime/exchange"
	"wasmstream.io/platform/runtime/operator"
)

// inFlightRecorder is an unaligned checkpoint a gate task has taken but not
// acknowledged yet: its snapshot's blobs and its in-flight data so far,
// while some input channels have still to deliver the barrier.
type inFlightRecorder struct {
	id    int64
	blob  string
	blobs []operator.Blob
	enc   *inFlightEncoder
	// waiting are the input channels whose frames are recorded, until
	// their barrier (or their end) arrives.
	waiting []bool
}

// overtakes says whether barrier b travels unaligned: a checkpoint of a job
// with unaligned checkpoints. Savepoints stay aligned, so that they hold no
// in-flight data and can be restored with another parallelism.
func (c *taskCheckpoint) overtakes(b checkpoint.Barrier) bool {
	return c.run.unaligned && b.Kind == checkpoint.KindCheckpoint
}

// overtake forwards barrier b, whose state the task has just captured in
// blobs, ahead of the task's queued output, keeping the data it overtakes
// as in-flight data; then the task records its input channels that have
// not delivered b yet, and acknowledges once they all have.
func (c *taskCheckpoint) overtake(ctx context.Context, t *Task, b checkpoint.Barrier, blobs []operator.Blob) error {
	enc := newInFlightEncoder(t.inFlightShape())
	for wi, w := range t.writers {
		save := func(ch int, frame []byte) { enc.output(wi, ch, frame) }
		if _, err := w.OvertakeEvent(exchange.Barrier{Barrier: b}, save); err != nil {
			releaseBlobs(blobs)
			return fmt.Errorf("checkpoint %d: forward the barrier: %w", b.ID, err)
		}
	}
	r := &inFlightRecorder{id: b.ID, blob: blobName(blobInFlight, t.name, t.subtask), blobs: blobs, enc: enc}
	if t.gate != nil {
		r.waiting = make([]bool, t.gate.NumChannels())
		for i := range r.waiting {
			r.waiting[i] = c.align.waiting(i)
		}
	}
	c.rec = r
	// What the barrier overtook in this worker's gate, on channels from
	// other workers, the producers could not save: it is recorded here.
	t.net.takeOvertaken(b.ID, -1, enc.input)
	if budget := c.run.j.Env.Budgets.InFlight; int64(len(enc.buf)) > budget {
		c.decline(checkpoint.ReasonInFlightTooLarge, fmt.Errorf("%w: the barrier overtook %d bytes of output, the budget is %d", ErrInFlightBudget, len(enc.buf), budget))
		return nil
	}
	for _, w := range r.waiting {
		if w {
			return nil
		}
	}
	c.acknowledge(ctx)
	return nil
}

// record keeps a frame that arrived on input channel ch, if the
// checkpoint being recorded waits for ch's barrier. The task calls it for
// every data buffer while c.rec is set.
func (c *taskCheckpoint) record(ch int, frame []byte) {
	r := c.rec
	if !r.waiting[ch] {
		return
	}
	if budget := c.run.j.Env.Budgets.InFlight; int64(len(r.enc.buf)+len(frame)) > budget {
		c.decline(checkpoint.ReasonInFlightTooLarge, fmt.Errorf("%w: input channel %d brought more than %d bytes before its barrier", ErrInFlightBudget, ch, budget))
		return
	}
	r.enc.input(ch, frame)
}

// arrived notes that input channel ch delivered barrier id, or ended (id
// 0): the checkpoint being recorded waits for it no more.
func (c *taskCheckpoint) arrived(ch int, id int64) {
	if c.rec != nil && (id == 0 || id == c.rec.id) {
		c.rec.waiting[ch] = false
	}
}

// acknowledge stores the recorded checkpoint's blobs, its in-flight data
// among them, and acknowledges it.
func (c *taskCheckpoint) acknowledge(ctx context.Context) {
	r := c.rec
	c.rec = nil
	blobs := r.blobs
	if r.enc.entries > 0 {
		blobs = append(blobs, operator.Blob{Name: r.blob, Data: r.enc.finish(), InFlight: true})
	}
	c.run.write(ctx, r.id, c.name, blobs, 0)
}

// decline gives up the checkpoint being recorded, telling the coordinator
// why.
func (c *taskCheckpoint) decline(reason checkpoint.FailureReason, err error) {
	r := c.rec
	c.abandon()
	c.run.coord.Decline(r.id, c.name, reason, err)
}

// abandon drops the checkpoint being recorded, if any: it failed, or the
// task is ending.
func (c *taskCheckpoint) abandon() {
	if c.rec != nil {
		releaseBlobs(c.rec.blobs)
		c.rec = nil
	}
}

// inFlightShape is the task's exchange as its in-flight data records it.
func (t *Task) inFlightShape() inFlightShape {
	var s inFlightShape
	if t.gate != nil {
		s.inputs = t.gate.NumChannels()
	}
	for _, w := range t.writers {
		s.outputs = append(s.outputs, w.NumChannels())
	}
	return s
}
