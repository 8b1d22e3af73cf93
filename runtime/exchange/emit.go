package exchange

import (
	"context"
	"fmt"

	"wasmstream.io/platform/abi"
)

// Emit encodes rec into channel's current buffer. A full buffer is sent
// against credit or joins the channel's backlog; when the pool has no free
// buffer, Emit waits (backpressure), and ctx is consulted only then. A
// record larger than a buffer spans several buffers of the channel.
func (w *Writer) Emit(ctx context.Context, channel int, rec *abi.Record) error {
	w.lock()
	err := w.emit(ctx, &w.subs[channel], rec)
	w.unlock()
	return err
}

// EmitBatch emits each record of recs, as Emit does, to the channel part
// chooses for it. With BufferTimeout > 0 it takes the writer's lock once for
// the batch instead of once per record. On error, the records before the
// failing one have been emitted.
func (w *Writer) EmitBatch(ctx context.Context, part Partitioner, recs []abi.Record) error {
	w.lock()
	defer w.unlock()
	for i := range recs {
		if err := w.emit(ctx, &w.subs[part.Channel(&recs[i])], &recs[i]); err != nil {
			return err
		}
	}
	return nil
}

func (w *Writer) emit(ctx context.Context, sp *subpartition, rec *abi.Record) error {
	if b := sp.cur; b != nil && len(b.data)+rec.Size() <= cap(b.data) {
		b.data = abi.AppendRecord(b.data, rec)
		sp.n++
		if w.flushAlways {
			w.finish(sp)
		}
		return nil
	}
	return w.emitSlow(ctx, sp, rec)
}

// emitSlow starts a new buffer for rec, or spans it over several.
func (w *Writer) emitSlow(ctx context.Context, sp *subpartition, rec *abi.Record) error {
	if w.err != nil {
		return w.err
	}
	size := rec.Size()
	if size > w.cfg.MaxRecordSize {
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrRecordTooLarge, size, w.cfg.MaxRecordSize)
	}
	if sp.cur != nil {
		w.finish(sp)
	}
	if frameHeader+size > w.cfg.BufferSize {
		return w.emitSpanning(ctx, sp, rec, size)
	}
	b, err := w.acquire(ctx)
	if err != nil {
		return err
	}
	b.data = abi.AppendRecord(abi.AppendInputHeader(b.data, 0), rec)
	sp.cur, sp.n = b, 1
	if w.flushAlways {
		w.finish(sp)
	} else if w.timer != nil && !w.armed {
		w.armed = true
		w.timer.Reset(w.cfg.BufferTimeout)
	}
	return nil
}

// emitSpanning sends a record larger than a buffer as consecutive fragments
// of its channel. Failing half way leaves the channel unusable, so the
// writer then refuses to start any buffer, returning the failure.
func (w *Writer) emitSpanning(ctx context.Context, sp *subpartition, rec *abi.Record, size int) error {
	enc := abi.AppendRecord(make([]byte, 0, size), rec)
	for off := 0; off < len(enc); {
		b, err := w.acquire(ctx)
		if err != nil {
			if off > 0 {
				w.err = fmt.Errorf("exchange: writer failed sending a record of %d bytes: %w", size, err)
			}
			return err
		}
		if off == 0 {
			b.size = size
		}
		n := copy(b.data[:cap(b.data)], enc[off:])
		b.data = b.data[:n]
		off += n
		b.kind = KindFragment
		if off == len(enc) {
			b.kind = KindLastFragment
		}
		w.send(sp, b)
	}
	return nil
}
