package window

import (
	"context"
	"fmt"
	"math"
	"slices"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
)

// A custom trigger (trigger: {type: custom}) is a function of kind trigger
// (abi/trigger.go) that the operator calls where a built-in trigger's
// methods run: onElement after a record is added to a window, onEventTime
// and onProcessingTime for the window's timers (its cleanup timer too, as
// Flink does), onMerge when sessions merge and clear when a window is
// dropped. Its state is opaque bytes per key and window, kept in the
// window's slot (tdata) and counted against the operator's budget; its
// timers are the window's, in the window's namespace.
//
// onElement calls are batched: the groups of a batch's records go into one
// frame until a record comes for a window already in it, whose earlier
// answer must be known first (a firing, a purge, a new state); then the
// frame runs, its answers are applied in order, and a new frame starts.
// Timers, merges and clears are rarer and run one call each.

// udfTrigger runs a custom trigger's function.
type udfTrigger struct {
	call *operator.GroupCall
	// maxGroups bounds the groups of one onElement frame.
	maxGroups int
	// queued are the windows of the onElement frame being built, by group,
	// with the record each was called for; results and failed their
	// answers once it runs.
	queued  []queuedElement
	results []abi.TriggerResult
	failed  []string
	// one answer's result, error and whether it wrote one (timers, merges
	// and clears).
	result   abi.TriggerResult
	errMsg   string
	hasError bool
}

// queuedElement is one group of an onElement frame.
type queuedElement struct {
	ks  *keyState
	s   *slot
	rec *abi.Record
}

// markTrigQueued: the slot has a group in the onElement frame being
// built (a custom trigger's).
const markTrigQueued slotMark = 1 << 3

// triggerBounds are the window bounds a custom trigger sees: a global
// window's are the whole int64 range, as its timers' namespace.
func (w *Operator) triggerBounds(s *slot) (start, end int64) {
	if w.global() {
		return math.MinInt64, math.MaxInt64
	}
	return s.start, s.end
}

// triggerHead is the group head of key ks's window s with its state.
func (w *Operator) triggerHead(ks *keyState, s *slot) abi.GroupHead {
	h := abi.GroupHead{Flags: abi.GroupWindow, Key: ks.key}
	h.WindowStart, h.WindowEnd = w.triggerBounds(s)
	if len(s.tdata) > 0 {
		h.Flags |= abi.GroupAcc
		h.Acc = s.tdata
	}
	return h
}

// queueElement adds rec, just added to window s of key ks, to the
// onElement frame.
func (w *Operator) queueElement(ctx context.Context, ks *keyState, s *slot, rec *abi.Record) error {
	u := w.trig.udf
	if len(u.queued) == 0 {
		u.call.Begin(abi.OpTriggerElement, w.wm, w.procNow)
	}
	h := w.triggerHead(ks, s)
	u.call.BeginEncoded(&h, 1)
	u.call.Frame = abi.AppendRecord(u.call.Frame, rec)
	s.mark |= markTrigQueued
	u.queued = append(u.queued, queuedElement{ks: ks, s: s, rec: rec})
	if len(u.queued) >= u.maxGroups {
		return w.runElements(ctx)
	}
	return nil
}

// runElements runs the onElement frame and applies its answers in order:
// timers and states as they come, then each window's result.
func (w *Operator) runElements(ctx context.Context) error {
	u := w.trig.udf
	if u == nil || len(u.queued) == 0 {
		return nil
	}
	n := len(u.queued)
	u.results = slices.Grow(u.results[:0], n)[:n]
	u.failed = slices.Grow(u.failed[:0], n)[:n]
	clear(u.results)
	clear(u.failed)
	err := u.call.Run(ctx, false, func(e *abi.Entry) error {
		q := &u.queued[e.Index]
		switch e.Tag {
		case abi.TagTrigger:
			u.results[e.Index] = e.Result
			return nil
		case abi.TagError:
			u.failed[e.Index] = string(e.Message)
			return nil
		}
		return w.triggerEntry(u.call, q.ks, q.s, e)
	})
	if err != nil {
		return fmt.Errorf("operator[%s]: trigger: %w", w.vertex, err)
	}
	for i := range u.queued {
		q := u.queued[i]
		q.s.mark &^= markTrigQueued
		if msg := u.failed[i]; msg != "" {
			cause := fmt.Errorf("udf[%s] function[%s]: trigger failed on the record: %s", u.call.Module, u.call.Function, msg)
			if err := w.policy.RecordFailed(ctx, q.rec, cause); err != nil {
				return err
			}
			continue
		}
		if err := w.applyResult(ctx, q.ks, q.s, u.results[i]); err != nil {
			return err
		}
	}
	clear(u.queued)
	u.queued = u.queued[:0]
	return nil
}

// triggerEntry applies a timer or state entry of a trigger's answer for
// window s of key ks.
func (w *Operator) triggerEntry(g *operator.GroupCall, ks *keyState, s *slot, e *abi.Entry) error {
	switch e.Tag {
	case abi.TagTimer:
		w.trigTimer(!e.Delete, e.Domain, e.Timestamp, ks, s)
	case abi.TagAccumulator:
		if len(e.Value) > abi.MaxTriggerState {
			return g.BadOutput(fmt.Errorf("trigger state of %d bytes, more than %d", len(e.Value), abi.MaxTriggerState))
		}
		w.store.setTriggerState(s, e.Value)
	default:
		return g.BadOutput(fmt.Errorf("trigger function wrote a %s entry", operator.TagName(e.Tag)))
	}
	return nil
}

// applyResult does what a trigger answered for window s of key ks: a
// firing (of a window with contents) is collected, purging when it says
// so; a purge alone empties the window now.
func (w *Operator) applyResult(ctx context.Context, ks *keyState, s *slot, r abi.TriggerResult) error {
	switch {
	case r.Fires() && s.n > 0:
		w.collect(ks, s)
		if r.Purges() {
			s.mark |= markPurge
		}
	case r.Purges() && s.mark&markDropped == 0:
		// Records still queued for the window function go in first.
		if err := w.fn.flush(ctx); err != nil {
			return err
		}
		w.purge(ks, s)
	}
	return nil
}

// purge drops the contents of window s of key ks, and the window itself
// when its trigger keeps no state.
func (w *Operator) purge(ks *keyState, s *slot) {
	w.store.setData(s, nil)
	s.n, s.agg, s.has = 0, builtinAcc{}, false
	if w.trig.stateless(s) {
		w.dropTriggered(ks, s)
	}
}

// callOne runs a custom trigger's call of one group (a timer, a merge or a
// clear) for window s of key ks and applies its timers and state; the
// result and an error entry's message are left in u.
func (w *Operator) callOne(ctx context.Context, ks *keyState, s *slot, op abi.Op, h *abi.GroupHead) error {
	u := w.trig.udf
	u.result, u.hasError, u.errMsg = abi.TriggerContinue, false, ""
	u.call.Begin(op, w.wm, w.clock())
	u.call.Add(h, nil)
	err := u.call.Run(ctx, false, func(e *abi.Entry) error {
		switch e.Tag {
		case abi.TagTrigger:
			u.result = e.Result
			return nil
		case abi.TagError:
			u.hasError, u.errMsg = true, string(e.Message)
			return nil
		}
		if op == abi.OpTriggerClear && e.Tag == abi.TagAccumulator {
			// A cleared window's state goes with it.
			return nil
		}
		return w.triggerEntry(u.call, ks, s, e)
	})
	if err == nil && u.hasError {
		err = fmt.Errorf("udf[%s] function[%s]: %s", u.call.Module, u.call.Function, u.errMsg)
	}
	if err != nil {
		start, end := w.triggerBounds(s)
		return fmt.Errorf("operator[%s]: trigger on window [%d, %d) of key %q: %w", w.vertex, start, end, ks.key, err)
	}
	return nil
}

// udfTimer tells the custom trigger of window s's timer at time in domain
// d and applies its result.
func (w *Operator) udfTimer(ctx context.Context, ks *keyState, s *slot, d abi.TimeDomain, time int64) error {
	h := w.triggerHead(ks, s)
	h.Flags |= abi.GroupTimer
	h.TimerTime, h.TimerDomain = time, d
	if err := w.callOne(ctx, ks, s, abi.OpTriggerTimer, &h); err != nil {
		return err
	}
	return w.applyResult(ctx, ks, s, w.trig.udf.result)
}

// udfClear tells the custom trigger that window s of key ks goes away, so
// that it deletes its timers, and drops the window's trigger state.
func (w *Operator) udfClear(ctx context.Context, ks *keyState, s *slot) error {
	h := w.triggerHead(ks, s)
	if err := w.callOne(ctx, ks, s, abi.OpTriggerClear, &h); err != nil {
		return err
	}
	w.store.setTriggerState(s, nil)
	return nil
}

// udfMerge merges sessions into and from into the session [start, end):
// every merged session is cleared under its old bounds (deleting its
// trigger's timers there), into takes the new bounds, and the trigger folds
// the merged sessions' states one onMerge call each (one call for a
// session that only grows), registering its timers in the new window.
func (w *Operator) udfMerge(ctx context.Context, ks *keyState, into *slot, from []*slot, start, end int64) error {
	for _, s := range append(from[:len(from):len(from)], into) {
		// The states stay for the merge calls: from's go with their slots,
		// into's is folded.
		h := w.triggerHead(ks, s)
		if err := w.callOne(ctx, ks, s, abi.OpTriggerClear, &h); err != nil {
			return err
		}
		w.cleanupTimer(false, ks, s)
	}
	into.start, into.end = start, end
	merge := func(other []byte, hasOther bool) error {
		h := w.triggerHead(ks, into)
		if hasOther && len(other) > 0 {
			h.Flags |= abi.GroupAcc2
			h.Acc2 = other
		}
		return w.callOne(ctx, ks, into, abi.OpTriggerMerge, &h)
	}
	if len(from) == 0 {
		return merge(nil, false)
	}
	for _, s := range from {
		if err := merge(s.tdata, true); err != nil {
			return err
		}
	}
	return nil
}
