package exchange

import (
	"context"
	"fmt"

	"wasmstream.io/platform/checkpoint"
)

// Event is an in-band control event: it travels in a buffer of its own, in
// order with the records of its channel (or ahead of them, OvertakeEvent).
// The set is closed, since only this package can implement the unexported
// method: Watermark, Idle, Barrier, EndOfPartition and ProcessingTime. A consumer switches
// over all of them and fails, naming the type, on one it does not handle,
// rather than dropping it. (A type elsewhere could still satisfy Event by
// embedding it; nothing may, and consumers reject it as unknown.)
type Event interface {
	inBand()
}

// Watermark says that no record with a timestamp at or before Time follows
// it on its channel (late records excepted).
type Watermark struct{ Time int64 }

// Idle marks a channel idle (Idle true) or active again. An idle channel
// does not hold back the combined watermark of the task that reads it.
type Idle struct{ Idle bool }

// Barrier carries a checkpoint barrier: in order with the records when the
// checkpoint is aligned (BroadcastEvent), ahead of them when it is not
// (OvertakeEvent).
type Barrier struct{ checkpoint.Barrier }

// EndOfPartition is the event Writer.Close sends on every channel: nothing
// follows it on that channel.
type EndOfPartition struct{}

// ProcessingTime carries a scripted processing time (milliseconds since the
// epoch) in a job whose test stream moves it: the producer's clock reached
// Time after the records before the event. A job on the wall clock never
// sends it.
type ProcessingTime struct{ Time int64 }

func (Watermark) inBand()      {}
func (Idle) inBand()           {}
func (Barrier) inBand()        {}
func (EndOfPartition) inBand() {}
func (ProcessingTime) inBand() {}

func (e ProcessingTime) String() string { return fmt.Sprintf("processing time %d", e.Time) }

func (e Watermark) String() string { return fmt.Sprintf("watermark %d", e.Time) }

func (e Idle) String() string {
	if e.Idle {
		return "idle"
	}
	return "active"
}

func (e Barrier) String() string { return fmt.Sprintf("barrier %d", e.ID) }

func (EndOfPartition) String() string { return "end of partition" }

// EmitEvent sends channel's partially filled buffer, then ev behind it. An
// event needs no credit but takes a buffer of the pool until the consumer
// recycles it, so events are bounded like records.
func (w *Writer) EmitEvent(ctx context.Context, channel int, ev Event) error {
	w.lock()
	defer w.unlock()
	if w.err != nil {
		return w.err
	}
	return w.emitEvent(ctx, &w.subs[channel], ev)
}

// BroadcastEvent is EmitEvent on every channel, in channel order.
func (w *Writer) BroadcastEvent(ctx context.Context, ev Event) error {
	w.lock()
	defer w.unlock()
	if w.err != nil {
		return w.err
	}
	for i := range w.subs {
		if err := w.emitEvent(ctx, &w.subs[i], ev); err != nil {
			return err
		}
	}
	return nil
}

func (w *Writer) emitEvent(ctx context.Context, sp *subpartition, ev Event) error {
	if sp.cur != nil {
		w.finish(sp)
	}
	b, err := w.acquire(ctx)
	if err != nil {
		return err
	}
	b.kind, b.event = KindEvent, ev
	w.send(sp, b)
	return nil
}

// Flush sends every partially filled buffer now.
func (w *Writer) Flush() {
	w.lock()
	w.flushAll()
	w.unlock()
}

func (w *Writer) flushAll() {
	for i := range w.subs {
		if w.subs[i].cur != nil {
			w.finish(&w.subs[i])
		}
	}
}

// timedFlush runs on the timer's goroutine BufferTimeout after a partial
// buffer was started while none was pending.
func (w *Writer) timedFlush() {
	w.mu.Lock()
	w.armed = false
	w.flushAll()
	w.mu.Unlock()
}

// Close flushes every channel and ends it with EndOfPartition. Later calls
// return ErrClosed. If ctx ends while Close waits for buffers, some channels
// may miss their end; the writer is closed all the same.
func (w *Writer) Close(ctx context.Context) error {
	w.lock()
	defer w.unlock()
	if w.err != nil {
		return w.err
	}
	w.err = ErrClosed
	if w.timer != nil {
		w.timer.Stop()
	}
	// Partial buffers go first, so that none is left behind a channel
	// whose end could not be sent.
	w.flushAll()
	for i := range w.subs {
		if err := w.emitEvent(ctx, &w.subs[i], EndOfPartition{}); err != nil {
			return err
		}
	}
	return nil
}
