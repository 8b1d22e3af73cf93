package window

import (
	"context"
	"fmt"
	"math"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/watermark"
)

// Triggered windows: a window operator with a trigger other than the
// default one of its clock works as Flink's WindowOperator does. Each window
// of a key is a slot of its own with its trigger's state (a sliding
// window's records are in each window they fall in, not in shared panes,
// since a purging firing clears one window only), and each window's timers
// are the trigger's and its cleanup's, registered per key in the window's
// namespace. A record is added to each of its windows that is not late and
// the trigger is told of it; a timer tells the trigger, and at the window's
// cleanup time (end − 1 ms + allowed lateness; end − 1 ms in processing
// time) drops the window and clears its trigger. A firing emits the window
// as the window function computes it, and a purging one then empties it.
//
// Firings are collected and emitted in one call of the window function per
// batch or advance of time, in order: before a window that has a firing
// pending changes again (a record, a merge, a timer), the pending firings
// are emitted. A window without contents does not fire; one that keeps no
// contents and no trigger state is dropped at once, since timers of a
// window that does not exist do nothing.

// slotMark is what a batch has pending on a triggered window's slot.
type slotMark uint8

const (
	// markFiring: a firing of the slot is collected and not yet emitted.
	markFiring slotMark = 1 << iota
	// markPurge: the slot's contents are dropped once it has fired.
	markPurge
	// markDropped: the slot has left its key and is released after the
	// pending firings.
	markDropped
)

// A global window (one per key) has no bounds: its slot's start and end are
// the least timestamp and the greatest + 1 of the records in it, which its
// results report (as count windows do; Flink gives them Long.MAX_VALUE),
// and its namespace is [math.MinInt64, math.MaxInt64). It never ends, so it
// has no cleanup and no record is late for it.

// global reports whether the windows are global.
func (w *Operator) global() bool { return w.plan.Type == plan.WindowGlobal }

// maxTimestamp is the last millisecond of window s (Flink's
// Window.maxTimestamp): math.MaxInt64 for a global window.
func (w *Operator) maxTimestamp(s *slot) int64 {
	if w.global() {
		return math.MaxInt64
	}
	return s.end - 1
}

// trigTimer registers (or deletes) the timer of key ks and window s at ts
// in domain d.
func (w *Operator) trigTimer(register bool, d abi.TimeDomain, ts int64, ks *keyState, s *slot) {
	ns := w.namespace2(timerFire, math.MinInt64, math.MaxInt64)
	if !w.global() {
		ns = w.namespace2(timerFire, s.start, s.end)
	}
	if register {
		w.timers.Register(d, ts, ks.key, ns)
	} else {
		w.timers.Delete(d, ts, ks.key, ns)
	}
}

// cleanupTimer registers (or deletes) the cleanup timer of key ks and
// window s; a global window has none.
func (w *Operator) cleanupTimer(register bool, ks *keyState, s *slot) {
	if !w.global() {
		w.trigTimer(register, w.domain(), w.cleanupTime(s.end), ks, s)
	}
}

// isCleanup reports whether a timer at ts in domain d is window s's
// cleanup.
func (w *Operator) isCleanup(s *slot, d abi.TimeDomain, ts int64) bool {
	return !w.global() && d == w.domain() && ts == w.cleanupTime(s.end)
}

// windowSlot is key ks's slot of window [start, end), or nil; a global
// window is the key's only slot, whatever its bounds.
func (w *Operator) windowSlot(ks *keyState, start, end int64) *slot {
	if w.global() {
		if len(ks.slots) == 0 {
			return nil
		}
		return ks.slots[0]
	}
	for i := len(ks.slots) - 1; i >= 0; i-- {
		if s := ks.slots[i]; s.start == start && s.end == end {
			return s
		}
	}
	return nil
}

// processTriggered adds records to their windows and emits the firings
// they cause.
func (w *Operator) processTriggered(ctx context.Context, recs []abi.Record) error {
	wp := w.plan
	session := wp.Type == plan.WindowSession
	if session && w.gapCall != nil {
		if err := w.sessionGaps(ctx, recs); err != nil {
			return err
		}
	}
	now := w.clock()
	w.procNow = now
	for i := range recs {
		rec := &recs[i]
		if w.evict != nil && w.evict.kind == evictDelta {
			// A record the delta evictor cannot read is in no window.
			if _, err := w.evict.number(rec.Value); err != nil {
				if err := w.policy.RecordFailed(ctx, rec, err); err != nil {
					return err
				}
				continue
			}
		}
		var err error
		switch {
		case wp.Type == plan.WindowGlobal:
			err = w.addToGlobal(ctx, rec)
		case session:
			gap := wp.Gap
			if w.gapCall != nil {
				if gap = w.gaps[i]; gap <= 0 {
					continue
				}
			}
			err = w.addToSession(ctx, rec, now, gap)
		default:
			err = w.addToTimeWindows(ctx, rec, now)
		}
		if err != nil {
			return err
		}
	}
	return w.flushFirings(ctx)
}

// addToTimeWindows adds a record to each of its tumbling or sliding windows
// that is not late, in Flink's order (the latest start first).
func (w *Operator) addToTimeWindows(ctx context.Context, rec *abi.Record, now int64) error {
	wp := w.plan
	t := w.timeOf(rec, now)
	last := w.offsetIn(t, wp.Slide)
	if last >= wp.Size {
		return nil // in a gap between sliding windows
	}
	key := w.keyOf(rec)
	added := false
	for d := last; d < wp.Size; d += wp.Slide {
		start, end := w.windowAt(t, d)
		if w.isLate(end) {
			continue
		}
		added = true
		ks, s, err := w.windowToAdd(ctx, key, start, end)
		if err == nil {
			err = w.addTriggered(ctx, ks, s, rec)
		}
		if err != nil {
			return err
		}
	}
	if !added {
		w.tooLate(rec)
	}
	return nil
}

// addToGlobal adds a record to its key's global window.
func (w *Operator) addToGlobal(ctx context.Context, rec *abi.Record) error {
	ks, s, err := w.windowToAdd(ctx, w.keyOf(rec), rec.Timestamp, operator.AddTime(rec.Timestamp, 1))
	if err == nil {
		err = w.addTriggered(ctx, ks, s, rec)
	}
	return err
}

// windowToAdd is the key's window [start, end) that a record is added to,
// made if it does not exist. A window with a firing pending fires first,
// which may drop it and its key.
func (w *Operator) windowToAdd(ctx context.Context, key []byte, start, end int64) (*keyState, *slot, error) {
	ks := w.store.key(key, true)
	s := w.windowSlot(ks, start, end)
	if s != nil && s.mark&markTrigQueued != 0 {
		// The custom trigger answers the window's earlier record first.
		if err := w.runElements(ctx); err != nil {
			return nil, nil, err
		}
		ks = w.store.key(key, true)
		s = w.windowSlot(ks, start, end)
	}
	if s != nil && s.mark&markFiring != 0 {
		if err := w.flushFirings(ctx); err != nil {
			return nil, nil, err
		}
		ks = w.store.key(key, true)
		s = w.windowSlot(ks, start, end)
	}
	if s == nil {
		s = w.store.newSlot(start, end)
		ks.insert(s)
	}
	return ks, s, nil
}

// addToSession adds a record to the session its window [t, t + gap) ends
// up in, merging the sessions it reaches; lateness is decided on the
// merged session, as for the default trigger.
func (w *Operator) addToSession(ctx context.Context, rec *abi.Record, now, gap int64) error {
	// Merging changes windows the custom trigger may not have answered
	// for yet.
	if err := w.runElements(ctx); err != nil {
		return err
	}
	t := w.timeOf(rec, now)
	start, end := t, operator.AddTime(t, gap)
	key := w.keyOf(rec)
	ks := w.store.key(key, false)
	if ks != nil {
		end = w.overlaps(ks, start, end)
		if w.overlapFiring() {
			// The sessions it reaches fire first, which may drop them.
			if err := w.flushFirings(ctx); err != nil {
				return err
			}
			end = operator.AddTime(t, gap)
			if ks = w.store.key(key, false); ks != nil {
				end = w.overlaps(ks, start, end)
			}
		}
	}
	if ks == nil {
		w.overlap = w.overlap[:0]
	}
	if w.isLate(end) {
		w.tooLate(rec)
		return nil
	}
	if ks == nil {
		ks = w.store.key(key, true)
	}
	s, err := w.mergeSessions(ctx, ks, start, end)
	if err != nil {
		return err
	}
	return w.addTriggered(ctx, ks, s, rec)
}

// mergeSessions returns the session of key ks that the window [start, end)
// ends up in, with the sessions overlaps collected (end is their merged
// end). Sessions it extends or bridges merge as Flink's MergingWindowSet
// merges them: the trigger's states merge into the result, which gets the
// trigger's timers (onMerge), and the merged windows' trigger and cleanup
// timers are deleted.
func (w *Operator) mergeSessions(ctx context.Context, ks *keyState, start, end int64) (*slot, error) {
	switch {
	case len(w.overlap) == 0:
		s := w.store.newSlot(start, end)
		ks.insert(s)
		return s, nil
	case len(w.overlap) == 1 && w.overlap[0].start <= start && w.overlap[0].end >= end:
		return w.overlap[0], nil
	}
	// Queued records go into their sessions first. Firings pending on
	// other sessions keep what they have.
	if err := w.fn.flush(ctx); err != nil {
		return nil, err
	}
	into := w.overlap[0]
	from := w.overlap[1:]
	if w.trig.udf != nil {
		if err := w.udfMerge(ctx, ks, into, from, min(into.start, start), end); err != nil {
			return nil, err
		}
	} else {
		merged := slot{tstate: into.tstate, hasFire: into.hasFire}
		for _, s := range from {
			w.trig.mergeState(&merged, s)
		}
		for _, s := range w.overlap {
			w.trig.clear(w, ks, s)
			w.cleanupTimer(false, ks, s)
		}
		into.start, into.end = min(into.start, start), end
		into.tstate, into.hasFire = merged.tstate, merged.hasFire
		w.trig.onMerge(w, ks, into)
	}
	if len(from) > 0 {
		w.merges = append(w.merges[:0], slotMerge{key: ks.key, into: into, from: from})
		err := w.fn.merge(ctx, w.merges)
		clear(w.merges)
		if err != nil {
			return nil, err
		}
		for _, s := range from {
			ks.remove(s)
			w.store.freeSlot(s)
		}
	}
	return into, nil
}

// overlapFiring reports whether a session overlaps collected has a firing
// pending.
func (w *Operator) overlapFiring() bool {
	for _, s := range w.overlap {
		if s.mark&markFiring != 0 {
			return true
		}
	}
	return false
}

// addTriggered adds a record to window s of key ks (which has no firing
// pending), tells the trigger and registers the window's cleanup.
func (w *Operator) addTriggered(ctx context.Context, ks *keyState, s *slot, rec *abi.Record) error {
	before := s.n
	if err := w.fn.add(ctx, ks, s, rec); err != nil {
		return err
	}
	if s.n == before {
		// The window function failed the record: it is in no window.
		if s.n == 0 && w.trig.stateless(s) {
			w.dropTriggered(ks, s)
		}
		return nil
	}
	if w.global() {
		end := operator.AddTime(rec.Timestamp, 1)
		if before == 0 {
			s.start, s.end = rec.Timestamp, end
		} else {
			s.start, s.end = min(s.start, rec.Timestamp), max(s.end, end)
		}
	}
	w.cleanupTimer(true, ks, s)
	if w.trig.udf != nil {
		return w.queueElement(ctx, ks, s, rec)
	}
	if w.trig.onElement(w, ks, s, rec.Timestamp) {
		w.collect(ks, s)
	}
	return nil
}

// collect notes a firing of window s of key ks.
func (w *Operator) collect(ks *keyState, s *slot) {
	s.mark |= markFiring
	if w.trig.purge {
		s.mark |= markPurge
	}
	w.slotBuf = append(w.slotBuf, s)
	n := len(w.slotBuf)
	w.fs = append(w.fs, firing{key: ks.key, start: s.start, end: s.end, slots: w.slotBuf[n-1 : n : n]})
	w.firedSlots = append(w.firedSlots, touchedSlot{ks: ks, s: s})
}

// dropTriggered takes window s out of its key now and releases it after
// the pending firings, which may still read it.
func (w *Operator) dropTriggered(ks *keyState, s *slot) {
	ks.remove(s)
	s.mark |= markDropped
	w.drops = append(w.drops, touchedSlot{ks: ks, s: s})
}

// flushFirings emits the collected firings, purges the windows that fired
// purging, and releases the dropped ones (and keys left without windows).
func (w *Operator) flushFirings(ctx context.Context) error {
	if err := w.runElements(ctx); err != nil {
		return err
	}
	if len(w.fs) == 0 && len(w.drops) == 0 {
		return nil
	}
	if len(w.fs) > 0 {
		if err := w.fn.flush(ctx); err != nil {
			return err
		}
		if err := w.evictFirings(ctx, abi.OpEvictBefore); err != nil {
			return err
		}
		if err := w.fn.fire(ctx, w.fs); err != nil {
			return err
		}
		if err := w.evictFirings(ctx, abi.OpEvictAfter); err != nil {
			return err
		}
		for _, t := range w.firedSlots {
			s := t.s
			purge := s.mark&markPurge != 0
			s.mark &^= markFiring | markPurge
			if purge && s.mark&markDropped == 0 {
				w.purge(t.ks, s)
			}
		}
		clear(w.fs)
		clear(w.firedSlots)
		w.fs, w.firedSlots, w.slotBuf = w.fs[:0], w.firedSlots[:0], w.slotBuf[:0]
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

// evictFirings runs the evictor, when it runs at op, on the windows that
// fire; a global window then reports the bounds of the records it keeps.
func (w *Operator) evictFirings(ctx context.Context, op abi.Op) error {
	if w.evict == nil || !w.evict.runs(op) {
		return nil
	}
	if w.evict.kind == evictCustom {
		if w.evict.custom == nil {
			return fmt.Errorf("operator[%s]: a custom evictor without its function", w.vertex)
		}
		return w.evict.runCustom(ctx, w, op)
	}
	for i := range w.fs {
		f := &w.fs[i]
		s := f.slots[0]
		if err := w.evict.evict(w, s); err != nil {
			return fmt.Errorf("operator[%s]: evictor: %w", w.vertex, err)
		}
		f.start, f.end = s.start, s.end
	}
	return nil
}

// advanceTriggered fires the timers of domain d up to upTo and emits what
// they fire.
func (w *Operator) advanceTriggered(ctx context.Context, d abi.TimeDomain, upTo int64) error {
	w.timerCtx, w.timerDomain, w.upTo = ctx, d, upTo
	err := w.timers.Advance(d, upTo, w.onTriggerTimer)
	w.timerCtx = nil
	if err == nil {
		err = w.flushFirings(ctx)
	}
	if err == nil && w.state != nil {
		if err = w.state.clearDue(d, upTo); err != nil {
			err = windowStateFail(w.vertex, err)
		}
	}
	if err == nil {
		err = w.out.Flush(ctx)
	}
	return err
}

// triggerTimer tells the trigger of a key's and window's timer, collects
// the firing it says, and drops the window at its cleanup time. A timer of
// a window that does not exist (any more) does nothing.
func (w *Operator) triggerTimer(tm watermark.Timer) error {
	ks := w.store.key(tm.Key, false)
	if ks == nil {
		return nil
	}
	start, end := namespaceTime(tm.Namespace), namespaceEnd(tm.Namespace)
	s := w.windowSlot(ks, start, end)
	if s != nil && s.mark&markFiring != 0 {
		// The window changes again: what it fired first goes out first,
		// which may drop it and its key.
		if err := w.flushFirings(w.timerCtx); err != nil {
			return err
		}
		if ks = w.store.key(tm.Key, false); ks == nil {
			return nil
		}
		s = w.windowSlot(ks, start, end)
	}
	if s == nil {
		return nil
	}
	if w.trig.udf != nil {
		if err := w.udfTimer(w.timerCtx, ks, s, w.timerDomain, tm.Timestamp); err != nil {
			return err
		}
		if s.mark&markDropped != 0 {
			// A purge dropped the window.
			return nil
		}
	} else if w.trig.onTimer(w, ks, s, w.timerDomain, tm.Timestamp) && s.n > 0 {
		w.collect(ks, s)
	}
	if w.isCleanup(s, w.timerDomain, tm.Timestamp) {
		if w.trig.udf != nil {
			if err := w.udfClear(w.timerCtx, ks, s); err != nil {
				return err
			}
		}
		w.trig.clear(w, ks, s)
		w.dropTriggered(ks, s)
	}
	return nil
}
