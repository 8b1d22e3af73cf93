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
// does, the rest which window or pane (big-endian so that byte order is time
// order): a pane's cleanup and a session's timers name a start or an end (8
// bytes), a time window's firing both its start and its end (16 bytes), as
// windows clipped at either end of the int64 range may share one of them.
// Fire sorts before clean at the same timestamp, so a window is emitted
// before its contents are dropped.
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
	// budget bounds the bytes the store keeps.
	budget int64
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
	// safeLo..safeHi are the times whose window arithmetic cannot
	// overflow (processPanes).
	safeLo, safeHi int64
	// fireSeq numbers the firing timers of time windows; a key's fired
	// holds the number of the last one it joined.
	fireSeq int64
	// panes lists, per pane start, the keys holding that pane.
	panes     map[int64][]*keyState
	freeLists [][]*keyState

	// Scratch reused across calls.
	lateRecs []abi.Record
	fs       []firing
	slotBuf  []*slot
	cleans   []int64
	ns       [17]byte
	// Sessions and count windows.
	overlap []*slot
	gaps    []int64
	gapCall *operator.GroupCall
	// gapAnswer reads the session gap function's answers.
	gapAnswer operator.Answer
	touched   []touchedSlot
	drops     []touchedSlot

	// trig is the trigger of triggered windows (triggered.go); nil for
	// the default trigger of the window's clock, which the panes and
	// timers above run. evict is their evictor, if any.
	trig  *trigger
	evict *evictor
	// procNow is the processing time of the batch being added; upTo,
	// timerDomain and timerCtx are the time, domain and context of the
	// timers being fired; onTriggerTimer is triggerTimer, bound once.
	procNow        int64
	upTo           int64
	timerDomain    abi.TimeDomain
	timerCtx       context.Context
	onTriggerTimer func(watermark.Timer) error
	firedSlots     []touchedSlot
	merges         []slotMerge
}

func newWindowOp(vertex string, wp *plan.Window, lateCount *atomic.Int64, policy *operator.ErrorPolicy, out *operator.Out, late operator.Stage) *Operator {
	w := &Operator{
		vertex: vertex, plan: wp, store: newWindowStore(), timers: watermark.NewTimerService(), budget: DefaultBudget,
		out: out, late: late, lateCount: lateCount, policy: policy, wm: abi.NoWatermark, lastTick: math.MinInt64,
		panes: map[int64][]*keyState{}, clock: operator.NowMillis,
	}
	if wp.Trigger != nil || wp.Evictor != nil {
		w.trig, w.evict = newTrigger(wp.Trigger, wp.Processing), newEvictor(wp.Evictor)
		w.onTriggerTimer = w.triggerTimer
	} else if wp.Type == plan.WindowTumbling || wp.Type == plan.WindowSliding {
		w.pane = gcd(wp.Size, wp.Slide)
		w.safeLo, w.safeHi = safeRange(wp)
	}
	return w
}

// safeRange is the times t for which t - offset, t + size + lateness and
// the pane bounds stay inside int64: plain arithmetic is exact there. Sizes
// too large for any such t give an empty range.
func safeRange(wp *plan.Window) (lo, hi int64) {
	margin := int64(0)
	for _, v := range []int64{wp.Size, wp.Slide, wp.Offset, wp.Lateness} {
		if v < 0 || v > math.MaxInt64/8 {
			return 1, 0
		}
		margin += v
	}
	return math.MinInt64 + margin + 1, math.MaxInt64 - margin - 1
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
// The last millisecond of the int64 range is windowed as the one before it,
// so that every window, whose end is exclusive and capped at math.MaxInt64,
// holds its records.
func (w *Operator) timeOf(rec *abi.Record, now int64) int64 {
	if w.plan.Processing {
		return max(now, w.lastTick+1)
	}
	return min(rec.Timestamp, math.MaxInt64-1)
}

// cleanupTime is when a window whose end is end has its contents dropped:
// its last millisecond plus the allowed lateness, capped at math.MaxInt64
// (Flink's cleanupTime), in event time; its last millisecond in processing
// time.
func (w *Operator) cleanupTime(end int64) int64 {
	if w.plan.Processing {
		return end - 1
	}
	return operator.AddTime(end-1, w.plan.Lateness)
}

// isLate reports whether the event-time window ending at end is past its
// allowed lateness.
func (w *Operator) isLate(end int64) bool {
	return !w.plan.Processing && w.cleanupTime(end) <= w.wm
}

// offsetIn is t's distance from the start of its period of length p (with
// the window offset, which is not negative): (t - offset) mod p, without
// overflow.
func (w *Operator) offsetIn(t, p int64) int64 {
	if off := w.plan.Offset; t >= math.MinInt64+off {
		return floorMod(t-off, p)
	}
	return floorMod(floorMod(t, p)-floorMod(w.plan.Offset, p), p)
}

// windowAt is the time window that holds t at distance d from its start:
// [t - d, t - d + size), both ends capped to the int64 range.
func (w *Operator) windowAt(t, d int64) (start, end int64) {
	return operator.SubTime(t, d), operator.AddTime(t, w.plan.Size-d)
}

func (w *Operator) Process(ctx context.Context, recs []abi.Record) error {
	var err error
	switch {
	case w.trig != nil:
		err = w.processTriggered(ctx, recs)
	case w.plan.Type == plan.WindowSession:
		err = w.processSessions(ctx, recs)
	case w.plan.Type == plan.WindowCount:
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
	if err == nil && w.store.used() > w.budget {
		err = errBudget(w.vertex, w.store.used(), w.budget)
	}
	return err
}

// afterBatch finishes what a batch started: session timers, count window
// firings.
func (w *Operator) afterBatch(ctx context.Context) error {
	switch {
	case w.trig != nil:
	case w.plan.Type == plan.WindowSession:
		w.sessionTimers()
	case w.plan.Type == plan.WindowCount:
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
		var pt paneTimes
		if t >= w.safeLo && t <= w.safeHi {
			// Far from the ends of int64 plain arithmetic is exact.
			pt.last = floorMod(t-wp.Offset, wp.Slide)
			if pt.last >= wp.Size {
				continue
			}
			pt.late = !wp.Processing && t-pt.last+wp.Size-1+wp.Lateness <= w.wm
			pt.paneStart = t - floorMod(t-wp.Offset, w.pane)
			pt.paneEnd = pt.paneStart + w.pane
			pt.firstEnd = t - (pt.last + (wp.Size-1-pt.last)/wp.Slide*wp.Slide) + wp.Size
		} else if pt = w.paneTimesNearLimits(t); pt.last >= wp.Size {
			// A sliding window that slides further than its size leaves
			// gaps: this record is in no window.
			continue
		}
		// The window with the latest end is the last one to become late.
		if pt.late {
			w.tooLate(rec)
			continue
		}
		ks := w.store.key(w.keyOf(rec), true)
		s := ks.slotAt(pt.paneStart)
		if s == nil {
			s = w.store.newSlot(pt.paneStart, pt.paneEnd)
			ks.insert(s)
			w.indexPane(pt.paneStart, ks)
		}
		// The window with the earliest end fires first: if it has fired,
		// the record is late but within the allowed lateness.
		if wp.Processing || pt.firstEnd-1 > w.wm {
			if err := w.fn.add(ctx, ks, s, rec); err != nil {
				return err
			}
			continue
		}
		last := pt.last
		if err := w.refirePanes(ctx, ks, s, rec, t, last); err != nil {
			return err
		}
	}
	return nil
}

// paneTimes are the window arithmetic of one record's time t: the distance
// of t from the start of the last window that holds it, whether that window
// (the last to become late) is late, and the record's pane and the end of
// the first window that holds it.
type paneTimes struct {
	last               int64
	late               bool
	paneStart, paneEnd int64
	firstEnd           int64
}

// paneTimesNearLimits computes t's pane times near the ends of int64,
// outside safeLo..safeHi, where every sum is capped (AddTime, SubTime).
// last >= Size says t is in no window (a slide longer than the size leaves
// gaps).
func (w *Operator) paneTimesNearLimits(t int64) (pt paneTimes) {
	wp := w.plan
	pt.last = w.offsetIn(t, wp.Slide)
	if pt.last >= wp.Size {
		return pt
	}
	_, lastEnd := w.windowAt(t, pt.last)
	pt.late = w.isLate(lastEnd)
	inPane := w.offsetIn(t, w.pane)
	pt.paneStart = operator.SubTime(t, inPane)
	pt.paneEnd = operator.AddTime(t, w.pane-inPane)
	_, pt.firstEnd = w.windowAt(t, pt.last+(wp.Size-1-pt.last)/wp.Slide*wp.Slide)
	return pt
}

// refirePanes adds a record late within the allowed lateness and emits
// every window of it that has already fired again, with the record in it.
func (w *Operator) refirePanes(ctx context.Context, ks *keyState, s *slot, rec *abi.Record, t, last int64) error {
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
	for d := last; d < wp.Size; d += wp.Slide {
		start, end := w.windowAt(t, d)
		if end-1 > w.wm || w.isLate(end) {
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

// registerPane registers the timers of the windows pane ps belongs to and
// of its cleanup. The pane's start (capped at math.MinInt64) lies in it, and
// its windows are those of any time in it.
func (w *Operator) registerPane(ps int64) {
	wp := w.plan
	dom := w.domain()
	last := w.offsetIn(ps, wp.Slide)
	for d := last; d < wp.Size; d += wp.Slide {
		// A window already due fires when its late records come.
		if start, end := w.windowAt(ps, d); wp.Processing || end-1 > w.wm {
			w.timers.Register(dom, end-1, nil, w.namespace2(timerFire, start, end))
		}
	}
	_, end := w.windowAt(ps, last)
	w.timers.Register(dom, w.cleanupTime(end), nil, w.namespace(timerClean, ps))
}

// namespace encodes a timer's namespace of one time into w.ns.
func (w *Operator) namespace(what byte, t int64) []byte {
	w.ns[0] = what
	binary.BigEndian.PutUint64(w.ns[1:], uint64(t)^1<<63)
	return w.ns[:9]
}

// namespace2 encodes a timer's namespace of a window [start, end) into w.ns.
func (w *Operator) namespace2(what byte, start, end int64) []byte {
	w.namespace(what, start)
	binary.BigEndian.PutUint64(w.ns[9:], uint64(end)^1<<63)
	return w.ns[:17]
}

func namespaceTime(ns []byte) int64 { return int64(binary.BigEndian.Uint64(ns[1:9]) ^ 1<<63) }

func namespaceEnd(ns []byte) int64 { return int64(binary.BigEndian.Uint64(ns[9:17]) ^ 1<<63) }

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
		start, end := t, namespaceEnd(tm.Namespace)
		w.fireSeq++
		// The window's panes: its start (pane aligned, or capped as its
		// first pane is), then every pane start after it up to its end.
		for ps := start; ; {
			for _, ks := range w.panes[ps] {
				if ks.fired != w.fireSeq {
					ks.fired = w.fireSeq
					w.fs = append(w.fs, w.paneFiring(ks, start, end))
				}
			}
			step := w.pane - w.offsetIn(ps, w.pane)
			if end-ps <= step {
				break
			}
			ps += step
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
		case w.trig != nil:
			err = w.advanceTriggered(ctx, abi.EventTime, wm)
			if err == nil && w.plan.Processing && wm == watermark.MaxWatermark {
				// The end of input fires every processing-time window.
				err = w.advanceTriggered(ctx, abi.ProcessingTime, wm)
			}
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
	if err := w.out.Sides.Advance(ctx, wm); err != nil {
		return err
	}
	return w.out.Next.Advance(ctx, wm)
}

func (w *Operator) Tick(ctx context.Context, now int64) error {
	if w.trig != nil && now > w.lastTick {
		w.lastTick = now
		if err := w.advanceTriggered(ctx, abi.ProcessingTime, now); err != nil {
			return err
		}
	} else if w.plan.Processing && w.plan.Type != plan.WindowCount && now > w.lastTick {
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
	if err := w.out.Sides.Tick(ctx, now); err != nil {
		return err
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
	if err := w.out.Sides.Finish(ctx); err != nil {
		return err
	}
	return w.out.Next.Finish(ctx)
}

func (w *Operator) Close(ctx context.Context) error {
	errs := []error{w.fn.close(ctx), w.out.Next.Close(ctx), w.out.Sides.Close(ctx)}
	if w.gapCall != nil {
		errs = append(errs, w.gapCall.Guest.Close(ctx))
	}
	if w.trig != nil && w.trig.udf != nil {
		errs = append(errs, w.trig.udf.call.Guest.Close(ctx))
	}
	if w.evict != nil && w.evict.custom != nil {
		errs = append(errs, w.evict.custom.Call.Guest.Close(ctx))
	}
	if w.late != nil {
		errs = append(errs, w.late.Close(ctx))
	}
	if w.state != nil {
		errs = append(errs, w.state.keyed.Close())
	}
	return errors.Join(errs...)
}
