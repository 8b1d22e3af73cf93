package udf

import (
	"fmt"

	"wasmstream.io/platform/abi"
)

// TriggerResult is what a trigger answers a record or a timer with, as
// Flink's TriggerResult.
type TriggerResult = abi.TriggerResult

// Trigger results: Continue does nothing, Fire emits the window (its
// contents stay: later firings accumulate), Purge drops its contents, and
// FireAndPurge emits the window and then drops them.
const (
	Continue     = abi.TriggerContinue
	Fire         = abi.TriggerFire
	Purge        = abi.TriggerPurge
	FireAndPurge = abi.TriggerFireAndPurge
)

// TriggerContext is what a trigger method sees and may change: its key and
// window, the times, the window's trigger state (a few bytes the platform
// keeps per key and window) and the window's timers. It is valid during
// the call only.
type TriggerContext struct {
	key       []byte
	window    Window
	watermark int64
	procTime  int64
	state     []byte
	hasState  bool
	stateSet  bool
	c         *caller
	group     uint32
}

// Key is the window's key.
func (t *TriggerContext) Key() []byte { return t.key }

// Window is the window's bounds; a global window's are the whole int64
// range.
func (t *TriggerContext) Window() Window { return t.window }

// Watermark is the current event-time watermark (math.MinInt64 before the
// first).
func (t *TriggerContext) Watermark() int64 { return t.watermark }

// ProcessingTime is the current processing time in milliseconds.
func (t *TriggerContext) ProcessingTime() int64 { return t.procTime }

// State is the window's trigger state, and false when it has none. In
// OnMerge it is the state merged so far.
func (t *TriggerContext) State() ([]byte, bool) { return t.state, t.hasState }

// SetState replaces the window's trigger state (at most
// abi.MaxTriggerState bytes); an empty one clears it.
func (t *TriggerContext) SetState(b []byte) {
	t.state, t.hasState, t.stateSet = append(t.state[:0:0], b...), len(b) > 0, true
}

// RegisterEventTimeTimer asks for OnEventTime when the watermark reaches
// ts; timers of a window are de-duplicated.
func (t *TriggerContext) RegisterEventTimeTimer(ts int64) { t.timer(false, abi.EventTime, ts) }

// DeleteEventTimeTimer deletes an event-time timer of the window.
func (t *TriggerContext) DeleteEventTimeTimer(ts int64) { t.timer(true, abi.EventTime, ts) }

// RegisterProcessingTimeTimer asks for OnProcessingTime when the clock
// reaches ts.
func (t *TriggerContext) RegisterProcessingTimeTimer(ts int64) {
	t.timer(false, abi.ProcessingTime, ts)
}

// DeleteProcessingTimeTimer deletes a processing-time timer of the window.
func (t *TriggerContext) DeleteProcessingTimeTimer(ts int64) { t.timer(true, abi.ProcessingTime, ts) }

func (t *TriggerContext) timer(del bool, d abi.TimeDomain, ts int64) {
	t.c.out = abi.AppendEntryTimer(t.c.out, t.group, del, d, ts)
	t.c.count++
}

// TriggerFuncs are a custom window trigger's methods, Flink's Trigger.
// OnElement is required; a nil method answers Continue and changes nothing.
type TriggerFuncs struct {
	// OnElement is called for each record added to a window.
	OnElement func(t *TriggerContext, r Record) (TriggerResult, error)
	// OnEventTime and OnProcessingTime are called for the window's timers
	// (its cleanup timer too, at the window's end plus the allowed
	// lateness).
	OnEventTime      func(t *TriggerContext, time int64) (TriggerResult, error)
	OnProcessingTime func(t *TriggerContext, time int64) (TriggerResult, error)
	// OnMerge is called when sessions merge into the context's window,
	// once per session merged in with that session's state (other, and ok
	// false when it has none), and once with ok false when a session only
	// grows: it merges other into the state (SetState) and registers the
	// timers the merged window needs.
	OnMerge func(t *TriggerContext, other []byte, ok bool) error
	// Clear is called when the window goes away (or is merged into
	// another): it deletes the timers it registered. The state is dropped
	// after it.
	Clear func(t *TriggerContext) error
}

// Trigger registers a custom window trigger (kind trigger), named by a
// window's trigger: {type: custom, module, function} in the job spec.
func Trigger(name string, f TriggerFuncs) {
	mustFunc(name, f.OnElement == nil)
	functions.add(function{name: name, kind: abi.KindTrigger, run: func(c *caller, frame []byte) []byte {
		return c.window.trigger(c, &f, frame)
	}})
}

// trigger runs a trigger's grouped frame: one method call per group.
func (w *windowCall) trigger(c *caller, f *TriggerFuncs, frame []byte) []byte {
	if err := w.begin(c, frame); err != nil {
		return c.fail(err.Error())
	}
	head := w.gr.Head()
	var tc TriggerContext
	w.each(c, func(g uint32) error {
		grp := &w.group
		tc = TriggerContext{key: grp.Key, window: Window{Start: grp.WindowStart, End: grp.WindowEnd},
			watermark: head.Watermark, procTime: head.ProcessingTime, c: c, group: g,
			state: grp.Acc, hasState: grp.Flags&abi.GroupAcc != 0}
		res := Continue
		var err error
		switch head.Op {
		case abi.OpTriggerElement:
			if !w.gr.NextRecord(&w.rec) {
				return fmt.Errorf("udf: trigger element group %d without a record", g)
			}
			res, err = f.OnElement(&tc, w.rec)
		case abi.OpTriggerTimer:
			on := f.OnEventTime
			if grp.TimerDomain == abi.ProcessingTime {
				on = f.OnProcessingTime
			}
			if on != nil {
				res, err = on(&tc, grp.TimerTime)
			}
		case abi.OpTriggerMerge:
			if f.OnMerge != nil {
				err = f.OnMerge(&tc, grp.Acc2, grp.Flags&abi.GroupAcc2 != 0)
			}
		case abi.OpTriggerClear:
			if f.Clear != nil {
				err = f.Clear(&tc)
			}
		default:
			err = fmt.Errorf("udf: trigger called with op %d", head.Op)
		}
		if err != nil {
			return err
		}
		if tc.stateSet {
			if len(tc.state) > abi.MaxTriggerState {
				return fmt.Errorf("udf: trigger state of %d bytes, more than %d", len(tc.state), abi.MaxTriggerState)
			}
			c.out = abi.AppendEntryAccumulator(c.out, g, tc.state)
			c.count++
		}
		if res != Continue {
			c.out = abi.AppendEntryTrigger(c.out, g, res)
			c.count++
		}
		return nil
	})
	return w.end(c)
}
