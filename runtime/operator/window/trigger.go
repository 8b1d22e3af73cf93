package window

import (
	"math"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/plan"
)

// A window's trigger, when it is not the default one of its clock (which
// op.go and session.go run on shared panes and timers). The built-in
// triggers are Flink's, with their per-window state in the window's slot:
//
//   - event_time: fires when the watermark passes the window's end − 1 ms,
//     and at once for a record that comes after that (late within the
//     allowed lateness).
//   - processing_time: fires when the clock passes the window's end − 1 ms.
//   - count: fires every count records of a key and window (the count is
//     the trigger's state; merging windows add their counts).
//   - continuous_event_time and continuous_processing_time: fire every
//     interval of their clock (the next fire time is the trigger's state;
//     merging windows take the earliest), from the first record's time
//     rounded down to the interval, and at the window's end (the event-time
//     one also at once for a late record, as event_time).
//
// purge makes every firing a FIRE_AND_PURGE (Flink's PurgingTrigger).
// Timers are registered per key and window, in the window's namespace, and
// shared by identity with the window's cleanup timer, as Flink's are.

// triggerKind is a built-in trigger.
type triggerKind uint8

const (
	trigEventTime triggerKind = iota
	trigProcessingTime
	trigCount
	trigContinuousEventTime
	trigContinuousProcessingTime
	// trigCustom is a custom trigger's function (udftrigger.go), which
	// the operator calls itself: the methods here do nothing for it.
	trigCustom
)

// trigger is a window operator's trigger.
type trigger struct {
	kind     triggerKind
	count    int64
	interval int64
	purge    bool
	// udf runs a custom trigger.
	udf *udfTrigger
}

// newTrigger is the trigger of a window plan: t, or the default one of the
// window's clock when t is nil.
func newTrigger(t *plan.Trigger, processing bool) *trigger {
	if t == nil {
		if processing {
			return &trigger{kind: trigProcessingTime}
		}
		return &trigger{kind: trigEventTime}
	}
	tr := &trigger{count: t.Count, interval: t.Interval, purge: t.Purge}
	switch t.Type {
	case plan.TriggerProcessingTime:
		tr.kind = trigProcessingTime
	case plan.TriggerCount:
		tr.kind = trigCount
	case plan.TriggerContinuousEventTime:
		tr.kind = trigContinuousEventTime
	case plan.TriggerContinuousProcessingTime:
		tr.kind = trigContinuousProcessingTime
	case plan.TriggerCustom:
		tr.kind = trigCustom
	default:
		tr.kind = trigEventTime
	}
	return tr
}

// onElement is told of a record (at timestamp ts) just added to window s of
// key ks, and says whether the window fires.
func (t *trigger) onElement(w *Operator, ks *keyState, s *slot, ts int64) bool {
	last := w.maxTimestamp(s)
	switch t.kind {
	case trigEventTime:
		if last <= w.wm {
			return true
		}
		w.trigTimer(true, abi.EventTime, last, ks, s)
	case trigProcessingTime:
		w.trigTimer(true, abi.ProcessingTime, last, ks, s)
	case trigCount:
		s.tstate++
		if s.tstate >= t.count {
			s.tstate = 0
			return true
		}
	case trigContinuousEventTime:
		if last <= w.wm {
			return true
		}
		w.trigTimer(true, abi.EventTime, last, ks, s)
		if !s.hasFire {
			start := ts - ts%t.interval
			t.nextFire(w, abi.EventTime, ks, s, start, start, false)
		}
	case trigContinuousProcessingTime:
		if !s.hasFire {
			start := w.procNow - w.procNow%t.interval
			t.nextFire(w, abi.ProcessingTime, ks, s, start, start, false)
		}
	}
	return false
}

// onTimer is told of the key's and window's timer at time in domain d,
// and says whether the window fires.
func (t *trigger) onTimer(w *Operator, ks *keyState, s *slot, d abi.TimeDomain, time int64) bool {
	switch t.kind {
	case trigEventTime:
		return d == abi.EventTime && time == w.maxTimestamp(s)
	case trigProcessingTime:
		return d == abi.ProcessingTime
	case trigContinuousEventTime:
		if d != abi.EventTime {
			return false
		}
		if time == w.maxTimestamp(s) {
			return true
		}
		if s.hasFire && s.tstate == time {
			return t.nextFire(w, d, ks, s, time, w.upTo, true)
		}
	case trigContinuousProcessingTime:
		if d == abi.ProcessingTime && s.hasFire && s.tstate == time {
			return t.nextFire(w, d, ks, s, time, w.upTo, true)
		}
	}
	return false
}

// nextFire sets and registers a continuous trigger's next fire time: the
// first multiple of the interval after from that is after passed, at most
// the window's last millisecond. On a record passed is from; after the fire
// time from it is the time the timers being fired reach. Flink fires again
// at once for every interval one watermark or tick passes, and at the
// window's end if it passes that too, with the same contents; here they are
// one firing, the last: nextFire says whether the fire time from fires,
// which it does unless the next one is passed too (the window's end). After
// the window's end nothing is registered again (Flink would register the
// same timer, which a window that is not cleaned up then fires forever).
func (t *trigger) nextFire(w *Operator, d abi.TimeDomain, ks *keyState, s *slot, from, passed int64, fired bool) bool {
	next := addTime(from, t.interval)
	if passed >= next {
		// The multiple of the interval after from that follows passed:
		// passed - (passed - from) mod interval + interval, without
		// overflow (passed >= from).
		r := int64((uint64(passed) - uint64(from)) % uint64(t.interval))
		next = addTime(passed-r, t.interval)
	}
	next = min(next, w.maxTimestamp(s))
	s.tstate, s.hasFire = next, true
	if next > from || !fired {
		w.trigTimer(true, d, next, ks, s)
	}
	return next <= from || next > passed
}

// onMerge registers the timers of window s of key ks, which windows have
// merged into (their trigger state already merged into s).
func (t *trigger) onMerge(w *Operator, ks *keyState, s *slot) {
	last := w.maxTimestamp(s)
	switch t.kind {
	case trigEventTime:
		if last > w.wm {
			w.trigTimer(true, abi.EventTime, last, ks, s)
		}
	case trigProcessingTime:
		if last > w.procNow {
			w.trigTimer(true, abi.ProcessingTime, last, ks, s)
		}
	case trigContinuousEventTime:
		if s.hasFire {
			w.trigTimer(true, abi.EventTime, s.tstate, ks, s)
		}
	case trigContinuousProcessingTime:
		if s.hasFire {
			w.trigTimer(true, abi.ProcessingTime, s.tstate, ks, s)
		}
	}
}

// clear deletes the timers the trigger set for window s of key ks and its
// state, as Flink's Trigger.clear: a continuous event-time trigger leaves
// its end-of-window timer, which fires into nothing.
func (t *trigger) clear(w *Operator, ks *keyState, s *slot) {
	switch t.kind {
	case trigEventTime:
		w.trigTimer(false, abi.EventTime, w.maxTimestamp(s), ks, s)
	case trigProcessingTime:
		w.trigTimer(false, abi.ProcessingTime, w.maxTimestamp(s), ks, s)
	case trigContinuousEventTime:
		if s.hasFire {
			w.trigTimer(false, abi.EventTime, s.tstate, ks, s)
		}
	case trigContinuousProcessingTime:
		if s.hasFire {
			w.trigTimer(false, abi.ProcessingTime, s.tstate, ks, s)
		}
	}
	s.tstate, s.hasFire = 0, false
}

// mergeState folds the trigger state of from into s, as Flink's triggers
// merge their states: counts add up, the earliest fire time wins.
func (t *trigger) mergeState(s, from *slot) {
	switch {
	case t.kind == trigCount:
		s.tstate += from.tstate
	case from.hasFire && (!s.hasFire || from.tstate < s.tstate):
		s.tstate, s.hasFire = from.tstate, true
	}
}

// stateless reports whether window s keeps no trigger state.
func (t *trigger) stateless(s *slot) bool { return s.tstate == 0 && !s.hasFire && len(s.tdata) == 0 }

// addTime is a + b capped at the ends of int64 (b > 0).
func addTime(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
