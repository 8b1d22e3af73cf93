package exchange

import "context"

// EmitEvent sends channel's partially filled buffer, then ev behind it. An
// event needs no credit but takes a buffer of the pool until the consumer
// recycles it, so events are bounded like records.
func (w *Writer) EmitEvent(ctx context.Context, channel int, ev any) error {
	w.lock()
	defer w.unlock()
	if w.err != nil {
		return w.err
	}
	return w.emitEvent(ctx, &w.subs[channel], ev)
}

// BroadcastEvent is EmitEvent on every channel, in channel order.
func (w *Writer) BroadcastEvent(ctx context.Context, ev any) error {
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

func (w *Writer) emitEvent(ctx context.Context, sp *subpartition, ev any) error {
	if sp.cur != nil {
		w.finish(sp)
	}
	b, err := w.acquire(ctx)
	if err != nil {
		return err
	}
	b.kind, b.event = kindEvent, ev
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
