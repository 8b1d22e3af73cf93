package window

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"sync/atomic"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/watermark"
)

// Timer namespaces of a window operator: the first byte says what a timer
// does, the rest which window or pane (8 bytes, big-endian so that byte
// order is time order). Fire sorts before clean at the same timestamp, so a
// window is emitted before its contents are dropped.
const (
	timerFire  byte = 0
	timerClean byte = 1
)

// Operator is a window operator subtask (keyed, or window_all with one
// subtask): it assigns records to windows, keeps their contents in a
// windowContents, fires windows when the watermark (or, with time:
// processing, the clock) passes their end, handles late records, and drops
// contents after the allowed lateness. It is owned by its task goroutine.
//
// Time windows (tumbling and sliding) store each record once, in a pane of
// gcd(size, slide): a window is the panes it covers, combined when it fires.
// Sessions and count windows are in window_session.go and window_count.go.
type Operator struct {
	vertex string
	plan   *plan.Window
	fn     windowFunc
	store  windowContents
	timers *watermark.TimerService
	out    *operator.Out
	// late receives records too late for any window (late_output); nil
	// drops and counts them.
	late operator.Stage
	// lateCount counts the records too late for every window.
	lateCount *atomic.Int64
	policy    *operator.ErrorPolicy
	// state is a window_process function's per-window state; nil without.
	state *windowState

	// wm is the event-time watermark; lastTick the last processing time
	// windows were fired at; clock is the processing time (nowMillis;
	// tests set their own).
	wm       int64
	lastTick int64
	clock    func() int64
	pane     int64
	// panes lists, per pane start, the keys holding that pane.
	panes     map[int64][]*keyState
	freeLists [][]*keyState

	// Scratch reused across calls.
	lateRecs []abi.Record
	fs       []firing
	slotBuf  []*slot
	cleans   []int64
	ns       [9]byte
	// Sessions and count windows.
	overlap []*slot
	gaps    []int64
	gapCall *operator.GroupCall
	// gapAnswer reads the session gap function's answers.
	gapAnswer operator.Answer
	touched   []touchedSlot
	drops     []touchedSlot
}

func newWindowOp(vertex string, wp *plan.Window, lateCount *atomic.Int64, policy *operator.ErrorPolicy, out *operator.Out, late operator.Stage) *Operator {
	w := &Operator{
		vertex: vertex, plan: wp, store: newWindowStore(), timers: watermark.NewTimerService(),
		out: out, late: late, lateCount: lateCount, policy: policy, wm: abi.NoWatermark, lastTick: math.MinInt64,
		panes: map[int64][]*keyState{}, clock: operator.NowMillis,
	}
	if wp.Type == plan.WindowTumbling || wp.Type == plan.WindowSliding {
		w.pane = gcd(wp.Size, wp.Slide)
	}
	return w
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// floorMod is a mod b in [0, b).
func floorMod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// domain is the clock the windows follow.
func (w *Operator) domain() abi.TimeDomain {
	if w.plan.Processing {
		return abi.ProcessingTime
	}
	return abi.EventTime
}

// keyOf is the key a record is windowed by: none for window_all.
func (w *Operator) keyOf(rec *abi.Record) []byte {
	if w.plan.All {
		return nil
	}
	return rec.Key
}

// timeOf is the time a record is windowed at: its timestamp, or with time:
// processing the clock (after the last firing, so never in a fired window).
func (w *Operator) timeOf(rec *abi.Record, now int64) int64 {
	if w.plan.Processing {
		return max(now, w.lastTick+1)
	}
	return rec.Timestamp
}

func (w *Operator) Process(ctx context.Context, recs []abi.Record) error {
	var err error
	switch w.plan.Type {
	case plan.WindowSession:
		err = w.processSessions(ctx, recs)
	case plan.WindowCount:
		err = w.processCount(ctx, recs)
	default:
		err = w.processPanes(ctx, recs)
	}
	if err == nil {
		err = w.fn.flush(ctx)
	}
	if err == nil {
		err = w.afterBatch(ctx)
	}
	if err == nil {
		err = w.out.Flush(ctx)
	}
	if err == nil {
		err = w.passLate(ctx)
	}
	clear(w.lateRecs)
	w.lateRecs = w.lateRecs[:0]
	if err == nil && w.store.used() > windowBudget {
		err = errBudget(w.vertex, w.store.used())
	}
	return err
}

// afterBatch finishes what a batch started: session timers, count window
// firings.
func (w *Operator) afterBatch(ctx context.Context) error {
	switch w.plan.Type {
	case plan.WindowSession:
		w.sessionTimers()
	case plan.WindowCount:
		return w.fireCount(ctx)
	}
	return nil
}

// tooLate handles a record too late for every window it belongs to.
func (w *Operator) tooLate(rec *abi.Record) {
	w.lateCount.Add(1)
	if w.late != nil {
		w.lateRecs = append(w.lateRecs, *rec)
	}
}

func (w *Operator) passLate(ctx context.Context) error {
	if w.late == nil || len(w.lateRecs) == 0 {
		return nil
	}
	return w.late.Process(ctx, w.lateRecs)
}

// processPanes adds records to the panes of tumbling and sliding windows.
func (w *Operator) processPanes(ctx context.Context, recs []abi.Record) error {
	wp := w.plan
	now := w.clock()
	for i := range recs {
		rec := &recs[i]
		t := w.timeOf(rec, now)
		lastStart := t - floorMod(t-wp.Offset, wp.Slide)
		if lastStart+wp.Size <= t {
			// A sliding window that slides further than its size leaves
			// gaps: this record is in no window.
			continue
		}
		// The window with the latest end is the last one to become late.
		if !wp.Processing && lastStart+wp.Size-1+wp.Lateness <= w.wm {
			w.tooLate(rec)
			continue
		}
		ks := w.store.key(w.keyOf(rec), true)
		ps := t - floorMod(t-wp.Offset, w.pane)
		s := ks.slotAt(ps)
		if s == nil {
			s = w.store.newSlot(ps, ps+w.pane)
			ks.insert(s)
			w.indexPane(ps, ks)
		}
		// The window with the earliest end fires first: if it has fired,
		// the record is late but within the allowed lateness.
		firstEnd := lastStart + wp.Size - (lastStart-(t-wp.Size+1))/wp.Slide*wp.Slide
		if wp.Processing || firstEnd-1 > w.wm {
			if err := w.fn.add(ctx, ks, s, rec); err != nil {
				return err
			}
			continue
		}
		if err := w.refirePanes(ctx, ks, s, rec, t, lastStart); err != nil {
			return err
		}
	}
	return nil
}

// refirePanes adds a record late within the allowed lateness and emits
// every window of it that has already fired again, with the record in it.
func (w *Operator) refirePanes(ctx context.Context, ks *keyState, s *slot, rec *abi.Record, t, lastStart int64) error {
	wp := w.plan
	if err := w.fn.flush(ctx); err != nil {
		return err
	}
	if err := w.fn.add(ctx, ks, s, rec); err != nil {
		return err
	}
	if err := w.fn.flush(ctx); err != nil {
		return err
	}
	w.fs, w.slotBuf = w.fs[:0], w.slotBuf[:0]
	for start := lastStart; start > t-wp.Size; start -= wp.Slide {
		end := start + wp.Size
		if end-1 > w.wm || end-1+wp.Lateness <= w.wm {
			continue
		}
		w.fs = append(w.fs, w.paneFiring(ks, start, end))
	}
	if err := w.fireAll(ctx); err != nil {
		return err
	}
	return w.out.FlushIfFull(ctx)
}

// indexPane notes that ks holds pane ps; the first key of a pane registers
// the timers of the windows it belongs to and of its cleanup.
func (w *Operator) indexPane(ps int64, ks *keyState) {
	keys, ok := w.panes[ps]
	if !ok {
		if n := len(w.freeLists); n > 0 {
			keys, w.freeLists = w.freeLists[n-1], w.freeLists[:n-1]
		}
		w.registerPane(ps)
	}
	w.panes[ps] = append(keys, ks)
}

func (w *Operator) registerPane(ps int64) {
	wp := w.plan
	d := w.domain()
	lastStart := ps - floorMod(ps-wp.Offset, wp.Slide)
	for start := lastStart; start > ps-wp.Size; start -= wp.Slide {
		// A window already due fires when its late records come.
		if end := start + wp.Size; wp.Processing || end-1 > w.wm {
			w.timers.Register(d, end-1, nil, w.namespace(timerFire, end))
		}
	}
	clean := lastStart + wp.Size - 1
	if !wp.Processing {
		clean += wp.Lateness
	}
	w.timers.Register(d, clean, nil, w.namespace(timerClean, ps))
}

// namespace encodes a timer's namespace into w.ns.
func (w *Operator) namespace(what byte, t int64) []byte {
	w.ns[0] = what
	binary.BigEndian.PutUint64(w.ns[1:], uint64(t)^1<<63)
	return w.ns[:]
}

func namespaceTime(ns []byte) int64 { return int64(binary.BigEndian.Uint64(ns[1:]) ^ 1<<63) }

// paneFiring is key ks's window [start, end): its panes in the window.
func (w *Operator) paneFiring(ks *keyState, start, end int64) firing {
	from := len(w.slotBuf)
	for _, s := range ks.slots {
		if s.start >= start && s.start < end {
			w.slotBuf = append(w.slotBuf, s)
		}
	}
	return firing{key: ks.key, start: start, end: end, slots: w.slotBuf[from:len(w.slotBuf):len(w.slotBuf)]}
}

// onTimer collects what a timer makes due: a window end of every key with
// panes in it, a pane to drop, or a session to fire or drop.
func (w *Operator) onTimer(tm watermark.Timer) error {
	t := namespaceTime(tm.Namespace)
	switch {
	case w.plan.Type == plan.WindowSession:
		w.sessionTimer(tm, t)
	case tm.Namespace[0] == timerClean:
		w.cleans = append(w.cleans, t)
	default:
		start := t - w.plan.Size
		for ps := start; ps < t; ps += w.pane {
			for _, ks := range w.panes[ps] {
				if ks.fired != t {
					ks.fired = t
					w.fs = append(w.fs, w.paneFiring(ks, start, t))
				}
			}
		}
	}
	return nil
}

// fireTimers fires every timer of the domain up to upTo: the windows due,
// in one batch, and then the drops.
func (w *Operator) fireTimers(ctx context.Context, d abi.TimeDomain, upTo int64) error {
	w.fs, w.slotBuf, w.cleans = w.fs[:0], w.slotBuf[:0], w.cleans[:0]
	if err := w.timers.Advance(d, upTo, w.onTimer); err != nil {
		return err
	}
	if err := w.fireAll(ctx); err != nil {
		return err
	}
	if w.plan.Type == plan.WindowSession {
		w.dropSessions()
	}
	for _, t := range w.cleans {
		w.dropPane(t)
	}
	if w.state != nil {
		if err := w.state.clearDue(d, upTo); err != nil {
			return windowStateFail(w.vertex, err)
		}
	}
	return w.out.Flush(ctx)
}

// fireAll emits the collected firings.
func (w *Operator) fireAll(ctx context.Context) error {
	if len(w.fs) == 0 {
		return nil
	}
	err := w.fn.fire(ctx, w.fs)
	clear(w.fs)
	w.fs = w.fs[:0]
	return err
}

// dropPane releases pane ps of every key holding it.
func (w *Operator) dropPane(ps int64) {
	keys := w.panes[ps]
	for _, ks := range keys {
		if s := ks.slotAt(ps); s != nil {
			ks.remove(s)
			w.store.freeSlot(s)
		}
		if len(ks.slots) == 0 {
			w.store.dropKey(ks)
		}
	}
	delete(w.panes, ps)
	clear(keys)
	w.freeLists = append(w.freeLists, keys[:0])
}

func (w *Operator) Advance(ctx context.Context, wm int64) error {
	if wm > w.wm {
		w.wm = wm
		var err error
		switch {
		case w.plan.Type == plan.WindowCount:
		case !w.plan.Processing:
			err = w.fireTimers(ctx, abi.EventTime, wm)
		case wm == watermark.MaxWatermark:
			// The end of input fires every processing-time window.
			err = w.fireTimers(ctx, abi.ProcessingTime, wm)
		}
		if err != nil {
			return err
		}
	}
	if w.late != nil {
		if err := w.late.Advance(ctx, wm); err != nil {
			return err
		}
	}
	return w.out.Next.Advance(ctx, wm)
}

func (w *Operator) Tick(ctx context.Context, now int64) error {
	if w.plan.Processing && w.plan.Type != plan.WindowCount && now > w.lastTick {
		w.lastTick = now
		if err := w.fireTimers(ctx, abi.ProcessingTime, now); err != nil {
			return err
		}
	}
	if w.late != nil {
		if err := w.late.Tick(ctx, now); err != nil {
			return err
		}
	}
	return w.out.Next.Tick(ctx, now)
}

func (w *Operator) Finish(ctx context.Context) error {
	if err := w.out.Flush(ctx); err != nil {
		return err
	}
	if w.late != nil {
		if err := w.late.Finish(ctx); err != nil {
			return err
		}
	}
	return w.out.Next.Finish(ctx)
}

func (w *Operator) Close(ctx context.Context) error {
	errs := []error{w.fn.close(ctx), w.out.Next.Close(ctx)}
	if w.gapCall != nil {
		errs = append(errs, w.gapCall.Guest.Close(ctx))
	}
	if w.late != nil {
		errs = append(errs, w.late.Close(ctx))
	}
	if w.state != nil {
		errs = append(errs, w.state.keyed.Close())
	}
	return errors.Join(errs...)
}
