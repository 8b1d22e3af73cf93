//go:build !wasip1

package udf

import (
	"fmt"
	"slices"
	"sort"

	"wasmstream.io/platform/abi"
)

// TriggerHarness runs a custom trigger natively, without WebAssembly, as
// the window operator calls it: it keeps each window's trigger state and
// timers, applies what the trigger answers, and returns its results. Tests
// set the watermark and the processing time themselves; the harness fires
// no timers on its own (call Timer). The frames and dispatch are the same
// as inside WebAssembly.
type TriggerHarness struct {
	fn     uint32
	c      *caller
	wm     int64
	now    int64
	states map[windowKey][]byte
	timers map[windowKey]map[timerAt]bool
}

// timerAt is a window's timer.
type timerAt struct {
	domain TimeDomain
	ts     int64
}

// windowKey names a key's window.
type windowKey struct {
	key string
	w   Window
}

// NewTriggerHarness makes a harness for the registered trigger name, with
// no state, no timers, processing time 0 and no watermark.
func NewTriggerHarness(name string) (*TriggerHarness, error) {
	fn := functions.lookup(name)
	if fn < 0 {
		return nil, fmt.Errorf("udf: no function %q is registered", name)
	}
	if k := functions.funcs[fn].kind; k != abi.KindTrigger {
		return nil, fmt.Errorf("udf: %q is a %s function, not trigger", name, k)
	}
	return &TriggerHarness{fn: uint32(fn), c: newCaller(&functions), wm: NoWatermark,
		states: map[windowKey][]byte{}, timers: map[windowKey]map[timerAt]bool{}}, nil
}

// SetWatermark and SetProcessingTime set the times the next calls see.
func (h *TriggerHarness) SetWatermark(wm int64)      { h.wm = wm }
func (h *TriggerHarness) SetProcessingTime(ms int64) { h.now = ms }

// Element calls OnElement for r, added to window w of key.
func (h *TriggerHarness) Element(key []byte, w Window, r Record) (TriggerResult, error) {
	return h.call(abi.OpTriggerElement, h.head(key, w), key, w, &r)
}

// Timer calls OnEventTime or OnProcessingTime for a timer at ts of window
// w of key, whether or not the trigger registered it (the window's cleanup
// timer is not one it registers).
func (h *TriggerHarness) Timer(key []byte, w Window, d TimeDomain, ts int64) (TriggerResult, error) {
	g := h.head(key, w)
	g.Flags |= abi.GroupTimer
	g.TimerTime, g.TimerDomain = ts, d
	delete(h.timers[windowKey{string(key), w}], timerAt{d, ts})
	return h.call(abi.OpTriggerTimer, g, key, w, nil)
}

// Merge merges the sessions from of key into the session into, as the
// window operator does: Clear for each under its old bounds, then OnMerge
// for each session merged into the first (once when there is only one).
func (h *TriggerHarness) Merge(key []byte, into Window, from ...Window) error {
	if len(from) == 0 {
		return fmt.Errorf("udf: merge of no sessions")
	}
	saved := map[Window][]byte{}
	for _, w := range from {
		saved[w] = h.states[windowKey{string(key), w}]
		if _, err := h.call(abi.OpTriggerClear, h.head(key, w), key, w, nil); err != nil {
			return err
		}
		delete(h.states, windowKey{string(key), w})
	}
	if st := saved[from[0]]; st != nil {
		h.states[windowKey{string(key), into}] = st
	}
	others := from[1:]
	if len(others) == 0 {
		_, err := h.call(abi.OpTriggerMerge, h.head(key, into), key, into, nil)
		return err
	}
	for _, w := range others {
		g := h.head(key, into)
		if st := saved[w]; st != nil {
			g.Flags |= abi.GroupAcc2
			g.Acc2 = st
		}
		if _, err := h.call(abi.OpTriggerMerge, g, key, into, nil); err != nil {
			return err
		}
	}
	return nil
}

// Clear calls Clear for window w of key and drops its state.
func (h *TriggerHarness) Clear(key []byte, w Window) error {
	_, err := h.call(abi.OpTriggerClear, h.head(key, w), key, w, nil)
	delete(h.states, windowKey{string(key), w})
	return err
}

// State is the trigger state of window w of key, and false when it has
// none.
func (h *TriggerHarness) State(key []byte, w Window) ([]byte, bool) {
	st, ok := h.states[windowKey{string(key), w}]
	return slices.Clone(st), ok
}

// Timers lists the timers of window w of key in domain and timestamp
// order.
func (h *TriggerHarness) Timers(key []byte, w Window) []HarnessTimer {
	out := []HarnessTimer{}
	for t := range h.timers[windowKey{string(key), w}] {
		out = append(out, HarnessTimer{Key: slices.Clone(key), Timestamp: t.ts, Domain: t.domain})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Domain != out[j].Domain {
			return out[i].Domain < out[j].Domain
		}
		return out[i].Timestamp < out[j].Timestamp
	})
	return out
}

func (h *TriggerHarness) head(key []byte, w Window) abi.GroupHead {
	g := abi.GroupHead{Flags: abi.GroupWindow, Key: key, WindowStart: w.Start, WindowEnd: w.End}
	if st, ok := h.states[windowKey{string(key), w}]; ok {
		g.Flags |= abi.GroupAcc
		g.Acc = st
	}
	return g
}

// call runs one group and applies its answer to window w of key.
func (h *TriggerHarness) call(op abi.Op, g abi.GroupHead, key []byte, w Window, r *Record) (TriggerResult, error) {
	frame := abi.AppendFrameHead(nil, abi.FrameHead{Op: op, Watermark: h.wm, ProcessingTime: h.now, Groups: 1})
	if r != nil {
		frame = abi.AppendGroupHead(frame, &g, 1)
		frame = abi.AppendRecord(frame, r)
	} else {
		frame = abi.AppendGroupHead(frame, &g, 0)
	}
	out := slices.Clone(h.c.call(h.fn, frame))
	var or abi.OutputReader
	if err := or.Reset(out, 1); err != nil {
		return Continue, err
	}
	wk := windowKey{string(key), w}
	res := Continue
	var e abi.Entry
	for or.Next(&e) {
		switch e.Tag {
		case abi.TagError:
			return Continue, fmt.Errorf("%s", e.Message)
		case abi.TagTrigger:
			res = e.Result
		case abi.TagAccumulator:
			if op == abi.OpTriggerClear {
				continue
			}
			if len(e.Value) == 0 {
				delete(h.states, wk)
			} else {
				h.states[wk] = slices.Clone(e.Value)
			}
		case abi.TagTimer:
			t := timerAt{e.Domain, e.Timestamp}
			if h.timers[wk] == nil {
				h.timers[wk] = map[timerAt]bool{}
			}
			if e.Delete {
				delete(h.timers[wk], t)
			} else {
				h.timers[wk][t] = true
			}
		default:
			return Continue, fmt.Errorf("udf: trigger wrote a tag %d entry", e.Tag)
		}
	}
	return res, or.Err()
}
