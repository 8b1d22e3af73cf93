package window

import (
	"context"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
)

// Count windows, by arrival per key, as Flink's countWindow: a tumbling
// count window (count) fires every count records with them and then forgets
// them; a sliding one (count, count_slide) fires every count_slide records
// with the last count records (fewer at first). Records are kept once, in
// panes of gcd(count, count_slide) records. A window's bounds are its
// records' least timestamp and greatest timestamp + 1 (at most math.MaxInt64). A count window that
// never fills is not emitted, also at the end of input; count windows have
// no late records.

// processCount adds records to their keys' count panes and collects the
// windows they complete; fireCount emits them once the batch's records are
// in their panes.
func (w *Operator) processCount(ctx context.Context, recs []abi.Record) error {
	wp := w.plan
	pane := gcd(wp.Count, wp.CountSlide)
	keep := int(wp.Count / pane)
	w.fs, w.slotBuf = w.fs[:0], w.slotBuf[:0]
	for i := range recs {
		rec := &recs[i]
		ks := w.store.key(w.keyOf(rec), true)
		var s *slot
		if n := len(ks.slots); n > 0 && ks.slots[n-1].n < pane {
			s = ks.slots[n-1]
		} else {
			s = w.store.newSlot(rec.Timestamp, operator.AddTime(rec.Timestamp, 1))
			ks.slots = append(ks.slots, s)
			if len(ks.slots) > keep {
				w.dropSlot(ks, ks.slots[0])
			}
		}
		before := s.n
		if err := w.fn.add(ctx, ks, s, rec); err != nil {
			return err
		}
		if s.n == before {
			continue
		}
		s.start, s.end = min(s.start, rec.Timestamp), max(s.end, operator.AddTime(rec.Timestamp, 1))
		if s.n < pane {
			continue
		}
		ks.arrived += pane
		if ks.arrived%wp.CountSlide != 0 {
			continue
		}
		from := max(len(ks.slots)-keep, 0)
		f := firing{key: ks.key, start: s.start, end: s.end}
		start := len(w.slotBuf)
		for _, x := range ks.slots[from:] {
			f.start, f.end = min(f.start, x.start), max(f.end, x.end)
			w.slotBuf = append(w.slotBuf, x)
		}
		f.slots = w.slotBuf[start:len(w.slotBuf):len(w.slotBuf)]
		w.fs = append(w.fs, f)
		if wp.CountSlide == wp.Count {
			// A tumbling count window forgets its records once emitted.
			w.dropSlot(ks, s)
		}
	}
	return nil
}

// fireCount emits the completed windows, then releases the panes no window
// needs any more.
func (w *Operator) fireCount(ctx context.Context) error {
	if err := w.fireAll(ctx); err != nil {
		return err
	}
	for _, d := range w.drops {
		w.store.freeSlot(d.s)
		if len(d.ks.slots) == 0 && w.store.key(d.ks.key, false) == d.ks {
			w.store.dropKey(d.ks)
		}
	}
	clear(w.drops)
	w.drops = w.drops[:0]
	return nil
}

// dropSlot takes s out of its key's panes now and releases it after the
// batch's firings, which may still read it.
func (w *Operator) dropSlot(ks *keyState, s *slot) {
	ks.remove(s)
	w.drops = append(w.drops, touchedSlot{ks: ks, s: s})
}
