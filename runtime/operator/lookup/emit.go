package lookup

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
)

// wait blocks until a record's lookups complete, then emits what may leave.
func (o *Op) wait(ctx context.Context) error {
	select {
	case e := <-o.completed:
		o.complete(e)
	case <-ctx.Done():
		return ctx.Err()
	}
	return o.drain(ctx)
}

func (o *Op) complete(e *entry) {
	o.doneSeq++
	e.done, e.seq = true, o.doneSeq
	o.inFlight--
}

// drain takes the completions that arrived and emits what may leave.
func (o *Op) drain(ctx context.Context) error {
	for {
		select {
		case e := <-o.completed:
			o.complete(e)
			continue
		default:
		}
		return o.flush(ctx)
	}
}

// flush emits the completed records that may leave and the watermarks
// that no longer wait for a record: in order, the queue's completed head;
// unordered, every completed record before the first watermark, in the
// order they completed.
func (o *Op) flush(ctx context.Context) error {
	for len(o.queue) > 0 {
		o.emit = o.emit[:0]
		if o.cfg.Ordered {
			n := 0
			for n < len(o.queue) && o.queue[n].done {
				o.emit = append(o.emit, o.queue[n])
				n++
			}
			o.queue = o.queue[:copy(o.queue, o.queue[n:])]
		} else {
			kept := o.queue[:0]
			segment := true
			for _, e := range o.queue {
				if e.watermark {
					segment = false
				}
				if segment && e.done {
					o.emit = append(o.emit, e)
					continue
				}
				kept = append(kept, e)
			}
			clear(o.queue[len(kept):])
			o.queue = kept
			slices.SortFunc(o.emit, func(a, b *entry) int { return cmp.Compare(a.seq, b.seq) })
		}
		if err := o.results(ctx, o.emit); err != nil {
			return err
		}
		if len(o.queue) == 0 || !o.queue[0].watermark {
			return nil
		}
		wm := o.queue[0].wm
		o.queue[0] = nil
		o.queue = o.queue[1:]
		if err := o.cfg.Next.Advance(ctx, wm); err != nil {
			return err
		}
	}
	return nil
}

// results runs the lookup_result function over completed entries, in
// batches, and passes its outputs on; entries whose lookups failed go to
// the error policy instead.
func (o *Op) results(ctx context.Context, es []*entry) error {
	for _, e := range es {
		o.bytes -= e.size
	}
	ok := es[:0:0]
	for _, e := range es {
		if e.err != nil {
			err := fmt.Errorf("operator[%s]: %w", o.cfg.Vertex, e.err)
			if perr := o.cfg.Policy.RecordFailed(ctx, &e.rec, err); perr != nil {
				return perr
			}
			continue
		}
		ok = append(ok, e)
	}
	for len(ok) > 0 {
		n := min(len(ok), o.cfg.BatchSize)
		batch := ok[:n]
		err := o.cfg.Policy.Isolate(0, n, func(lo, hi int) error {
			if err := o.callResult(ctx, batch[lo:hi]); err != nil {
				return err
			}
			return o.cfg.Next.Process(ctx, o.out)
		}, func(i int, err error) error { return o.cfg.Policy.RecordFailed(ctx, &batch[i].rec, err) })
		if err != nil {
			return err
		}
		ok = ok[n:]
	}
	return nil
}

// callResult calls the lookup_result function over es and decodes its
// outputs into o.out, failing the records it reports as failed.
func (o *Op) callResult(ctx context.Context, es []*entry) error {
	c := &o.cfg.Result
	o.frame = abi.AppendInputHeader(o.frame[:0], uint32(len(es)))
	for _, e := range es {
		o.frame = abi.AppendLookupInput(o.frame, &e.rec, e.results)
	}
	out, err := c.Guest.Call(ctx, c.Fn, o.frame)
	if err != nil {
		return err
	}
	if err := o.reader.Reset(out, uint32(len(es))); err != nil {
		return c.BadOutput(err)
	}
	o.out, o.heads = o.out[:0], o.heads[:0]
	o.answer.Reset("record")
	var failed []int
	var msgs []string
	start := 0
	var e abi.Entry
	for o.reader.Next(&e) {
		if e.Tag == abi.TagError && e.Index == abi.AllRecords {
			return c.BadOutput(fmt.Errorf("frame failed: %s", e.Message))
		}
		first, v, err := o.answer.Next(&e)
		if err != nil {
			return c.BadOutput(err)
		}
		if e.Tag != abi.TagError && e.Tag != abi.TagRecord {
			return c.BadOutput(fmt.Errorf("lookup_result function wrote a %s entry", operator.TagName(e.Tag)))
		}
		if first {
			start = len(o.out)
		}
		switch v {
		case operator.Fail:
			o.out = o.out[:start]
			failed, msgs = append(failed, int(e.Index)), append(msgs, string(e.Message))
		case operator.Emit:
			rec := e.Apply(&es[e.Index].rec)
			if e.Flags&abi.HasHeaders != 0 {
				at := len(o.heads)
				o.heads = append(o.heads, e.Headers...)
				rec.Headers = o.heads[at:len(o.heads):len(o.heads)]
			}
			o.out = append(o.out, rec)
		}
	}
	if err := o.reader.Err(); err != nil {
		return c.BadOutput(err)
	}
	for k, i := range failed {
		err := fmt.Errorf("udf[%s] function[%s]: %s", c.Module, c.Function, msgs[k])
		if err := o.cfg.Policy.RecordFailed(ctx, &es[i].rec, err); err != nil {
			return err
		}
	}
	return nil
}

// Advance queues the watermark behind the records before it, or passes it
// on when none waits.
func (o *Op) Advance(ctx context.Context, wm int64) error {
	if err := o.start(ctx); err != nil {
		return err
	}
	if err := o.drain(ctx); err != nil {
		return err
	}
	if len(o.queue) == 0 {
		return o.cfg.Next.Advance(ctx, wm)
	}
	o.queue = append(o.queue, &entry{watermark: true, wm: wm})
	return nil
}

// Tick emits what completed since the last call: the task ticks at least
// every few milliseconds, which bounds how long a result waits.
func (o *Op) Tick(ctx context.Context, now int64) error {
	if err := o.start(ctx); err != nil {
		return err
	}
	if err := o.drain(ctx); err != nil {
		return err
	}
	return o.cfg.Next.Tick(ctx, now)
}

// Finish waits for every lookup in flight and emits everything.
func (o *Op) Finish(ctx context.Context) error {
	if err := o.start(ctx); err != nil {
		return err
	}
	for o.inFlight > 0 {
		if err := o.wait(ctx); err != nil {
			return err
		}
	}
	if err := o.flush(ctx); err != nil {
		return err
	}
	return o.cfg.Next.Finish(ctx)
}

// Close stops the lookups in flight and waits for their goroutines.
func (o *Op) Close(ctx context.Context) error {
	o.cancel()
	o.wg.Wait()
	var errs []error
	if o.cfg.Request != nil {
		errs = append(errs, o.cfg.Request.Guest.Close(ctx))
	}
	errs = append(errs, o.cfg.Result.Guest.Close(ctx), o.cfg.Next.Close(ctx))
	return errors.Join(errs...)
}
