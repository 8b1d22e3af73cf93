package window

import (
	"context"
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/watermark"
)

// Session windows: a record opens the window [t, t+gap) and windows of the
// same key that intersect (touching included, as in Flink) merge into one,
// their contents merged by the window function. Lateness is decided on the
// merged session, as Flink's WindowOperator does with its MergingWindowSet: a
// record whose own window is past the allowed lateness still joins a session
// it reaches that is not. Each session has a firing timer at end - 1 (and a
// cleanup timer at end - 1 + allowed lateness, capped at math.MaxInt64),
// registered once per batch for the sessions the batch changed.

// processSessions adds records to their keys' sessions.
func (w *Operator) processSessions(ctx context.Context, recs []abi.Record) error {
	wp := w.plan
	if w.gapCall != nil {
		if err := w.sessionGaps(ctx, recs); err != nil {
			return err
		}
	}
	now := w.clock()
	for i := range recs {
		rec := &recs[i]
		gap := wp.Gap
		if w.gapCall != nil {
			if gap = w.gaps[i]; gap <= 0 {
				continue
			}
		}
		t := w.timeOf(rec, now)
		start, end := t, operator.AddTime(t, gap)
		ks := w.store.key(w.keyOf(rec), false)
		if ks != nil {
			end = w.overlaps(ks, start, end)
		} else {
			w.overlap = w.overlap[:0]
		}
		// The merged session decides: it is late only when the sessions
		// the record reaches (if any) are too.
		if w.isLate(end) {
			w.tooLate(rec)
			continue
		}
		if ks == nil {
			ks = w.store.key(w.keyOf(rec), true)
		}
		s, err := w.session(ctx, ks, start, end)
		if err != nil {
			return err
		}
		if wp.Processing || s.end-1 > w.wm {
			if err := w.fn.add(ctx, ks, s, rec); err != nil {
				return err
			}
			continue
		}
		// Late within the allowed lateness: the session has fired (or
		// would have); emit it again with the record.
		if err := w.fn.flush(ctx); err != nil {
			return err
		}
		if err := w.fn.add(ctx, ks, s, rec); err != nil {
			return err
		}
		if err := w.fn.flush(ctx); err != nil {
			return err
		}
		w.fs, w.slotBuf = w.fs[:0], append(w.slotBuf[:0], s)
		w.fs = append(w.fs, firing{key: ks.key, start: s.start, end: s.end, slots: w.slotBuf[:1:1]})
		if err := w.fireAll(ctx); err != nil {
			return err
		}
		if err := w.out.FlushIfFull(ctx); err != nil {
			return err
		}
	}
	return nil
}

// overlaps collects in w.overlap the sessions of key ks that the window
// [start, end) intersects (touching included) and returns the end of the
// session they merge into.
func (w *Operator) overlaps(ks *keyState, start, end int64) int64 {
	w.overlap = w.overlap[:0]
	for _, s := range ks.slots {
		if s.start <= end && s.end >= start {
			w.overlap = append(w.overlap, s)
			end = max(end, s.end)
		}
	}
	return end
}

// session returns the session of key ks that the window [start, end) ends
// up in, merging the sessions it bridges, which overlaps has collected; end
// is already the merged end.
func (w *Operator) session(ctx context.Context, ks *keyState, start, end int64) (*slot, error) {
	switch len(w.overlap) {
	case 0:
		s := w.store.newSlot(start, end)
		ks.insert(s)
		w.touched = append(w.touched, touchedSlot{ks: ks, s: s})
		return s, nil
	case 1:
		s := w.overlap[0]
		if start < s.start || end > s.end {
			s.start, s.end = min(s.start, start), max(s.end, end)
			w.touched = append(w.touched, touchedSlot{ks: ks, s: s})
		}
		return s, nil
	}
	// The record bridges sessions: merge them into the first. Queued
	// records go into their slots first.
	if err := w.fn.flush(ctx); err != nil {
		return nil, err
	}
	into := w.overlap[0]
	from := w.overlap[1:]
	into.start = min(into.start, start)
	for _, s := range from {
		into.end = max(into.end, s.end)
	}
	into.end = max(into.end, end)
	if err := w.fn.merge(ctx, []slotMerge{{key: ks.key, into: into, from: from}}); err != nil {
		return nil, err
	}
	for _, s := range from {
		w.deleteSessionTimers(ks.key, s)
		ks.remove(s)
		w.forget(s)
		w.store.freeSlot(s)
	}
	w.touched = append(w.touched, touchedSlot{ks: ks, s: into})
	return into, nil
}

// forget removes a freed slot from the batch's touched list.
func (w *Operator) forget(s *slot) {
	kept := w.touched[:0]
	for _, t := range w.touched {
		if t.s != s {
			kept = append(kept, t)
		}
	}
	clear(w.touched[len(kept):])
	w.touched = kept
}

// sessionTimers moves the timers of the sessions the batch changed to their
// new ends.
func (w *Operator) sessionTimers() {
	d := w.domain()
	for _, t := range w.touched {
		s := t.s
		if s.timerEnd == s.end {
			continue
		}
		w.deleteSessionTimers(t.ks.key, s)
		s.timerEnd = s.end
		// A session already due fired when its record came (late within
		// the allowed lateness): only its cleanup is left to register.
		if w.plan.Processing || s.end-1 > w.wm {
			w.timers.Register(d, s.end-1, t.ks.key, w.namespace(timerFire, s.end))
		}
		if w.plan.Lateness > 0 && !w.plan.Processing {
			w.timers.Register(d, w.cleanupTime(s.end), t.ks.key, w.namespace(timerClean, s.end))
		}
	}
	clear(w.touched)
	w.touched = w.touched[:0]
}

func (w *Operator) deleteSessionTimers(key []byte, s *slot) {
	if s.timerEnd == 0 {
		return
	}
	d := w.domain()
	w.timers.Delete(d, s.timerEnd-1, key, w.namespace(timerFire, s.timerEnd))
	if w.plan.Lateness > 0 && !w.plan.Processing {
		w.timers.Delete(d, w.cleanupTime(s.timerEnd), key, w.namespace(timerClean, s.timerEnd))
	}
	s.timerEnd = 0
}

// sessionTimer collects a session to fire or drop.
func (w *Operator) sessionTimer(tm watermark.Timer, end int64) {
	ks := w.store.key(tm.Key, false)
	if ks == nil {
		return
	}
	var s *slot
	for _, x := range ks.slots {
		if x.end == end {
			s = x
		}
	}
	if s == nil {
		return
	}
	if tm.Namespace[0] == timerFire {
		w.slotBuf = append(w.slotBuf, s)
		n := len(w.slotBuf)
		w.fs = append(w.fs, firing{key: ks.key, start: s.start, end: s.end, slots: w.slotBuf[n-1 : n : n]})
	}
	if tm.Namespace[0] == timerClean || w.plan.Lateness == 0 || w.plan.Processing {
		w.drops = append(w.drops, touchedSlot{ks: ks, s: s})
	}
}

// dropSessions releases the sessions past their allowed lateness.
func (w *Operator) dropSessions() {
	for _, d := range w.drops {
		d.s.timerEnd = 0
		d.ks.remove(d.s)
		w.store.freeSlot(d.s)
		if len(d.ks.slots) == 0 {
			w.store.dropKey(d.ks)
		}
	}
	clear(w.drops)
	w.drops = w.drops[:0]
}

// SessionGaps are the gaps the session_gap function gave the records of the
// last batch, by position, in milliseconds: negative for a record it
// failed. They are valid until the next batch. platform udf test prints
// them.
func (w *Operator) SessionGaps() []int64 { return w.gaps }

// sessionGaps calls the session_gap function over the batch: one group per
// run of records with the same key, one call. A record the function fails
// goes through on_udf_error and gets gap 0 (it is skipped).
func (w *Operator) sessionGaps(ctx context.Context, recs []abi.Record) error {
	g := w.gapCall
	if cap(w.gaps) < len(recs) {
		w.gaps = make([]int64, len(recs))
	}
	w.gaps = w.gaps[:len(recs)]
	clear(w.gaps)
	g.Begin(abi.OpNone, w.wm, w.clock())
	var head abi.GroupHead
	for lo := 0; lo < len(recs); {
		key := w.keyOf(&recs[lo])
		hi := lo + 1
		for hi < len(recs) && string(w.keyOf(&recs[hi])) == string(key) {
			hi++
		}
		head = abi.GroupHead{Key: key}
		g.Add(&head, recs[lo:hi])
		lo = hi
	}
	w.gapAnswer.Reset("record")
	err := g.Run(ctx, true, func(e *abi.Entry) error {
		_, verdict, err := w.gapAnswer.Next(e)
		if err != nil {
			return g.BadOutput(err)
		}
		i := int(e.Index)
		switch {
		case e.Tag != abi.TagTimestamp && e.Tag != abi.TagError:
			return g.BadOutput(fmt.Errorf("session_gap function wrote a %s entry", operator.TagName(e.Tag)))
		case verdict == operator.Fail:
			w.gaps[i] = -1
		case verdict == operator.Emit:
			if e.Timestamp <= 0 {
				return g.BadOutput(fmt.Errorf("session gap %d for record %d: must be positive", e.Timestamp, i))
			}
			w.gaps[i] = e.Timestamp
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("operator[%s]: %w", w.vertex, err)
	}
	for i, gap := range w.gaps {
		switch {
		case gap == 0:
			return fmt.Errorf("operator[%s]: %w", w.vertex, g.BadOutput(fmt.Errorf("no session gap for record %d", i)))
		case gap < 0:
			if err := w.policy.RecordFailed(ctx, &recs[i], fmt.Errorf("udf[%s] function[%s]: session gap failed", g.Module, g.Function)); err != nil {
				return err
			}
		}
	}
	return nil
}
