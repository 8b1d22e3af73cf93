package runtime

import (
	"context"
	"errors"
	"math"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/watermark"
)

// wmMode is how a source subtask makes watermarks.
type wmMode int

const (
	// wmBounded: the largest timestamp seen, less the out-of-orderness
	// bound, less 1 (monotonous is a bound of 0).
	wmBounded wmMode = iota
	// wmPunctuated: the watermarks a watermark function emits after records.
	wmPunctuated
	// wmIngestion: records take the processing time as their timestamp and
	// the watermark follows the clock.
	wmIngestion
)

// wmSource generates a source subtask's watermarks. Each split (subject
// filter) has its own watermark; the subtask emits their minimum over the
// splits that are not idle (a watermark.Valve). A split without records for
// idleAfter is idle; when every split is idle the subtask tells its
// consumers. Watermarks go out every interval of processing time, or after
// the record that raised them when interval is 0 (and always so for
// punctuated watermarks).
type wmSource struct {
	mode      wmMode
	delay     int64
	interval  int64
	idleAfter int64
	// split is the split of the records process receives; the source task
	// sets it.
	split  int
	splits []splitTime
	// names identify the splits in checkpoints, across parallelisms.
	names []string
	valve *watermark.Valve
	// emitted is the last watermark passed on; nextEmit is when the next
	// periodic one is due.
	emitted  int64
	nextEmit int64
	idle     bool
	// announce tells the task's consumers the subtask is idle or active.
	announce func(ctx context.Context, idle bool) error
	// punct runs the watermark function of the punctuated mode.
	punct *punctuator
	// clock is the processing time (nowMillis; tests set their own).
	clock func() int64
	next  operator.Stage
}

// splitTime is one split's event time: the largest timestamp seen, the
// last watermark its watermark function emitted (punctuated mode), when
// (processing time) it last had a record, and whether it is idle.
type splitTime struct {
	maxTs      int64
	punctWM    int64
	lastActive int64
	idle       bool
}

func newWMSource(mode wmMode, delay, interval, idleAfter int64, announce func(context.Context, bool) error, next operator.Stage) *wmSource {
	return &wmSource{
		mode: mode, delay: delay, interval: interval, idleAfter: idleAfter,
		emitted: abi.NoWatermark, announce: announce, clock: operator.NowMillis, next: next,
	}
}

// setSplits sizes the generator for the splits its subtask reads, all active
// from now.
func (g *wmSource) setSplits(n int) {
	g.splits = make([]splitTime, n)
	g.valve = watermark.NewValve(n)
	now := g.clock()
	for i := range g.splits {
		g.splits[i] = splitTime{maxTs: abi.NoWatermark, punctWM: abi.NoWatermark, lastActive: now}
	}
}

// boundedWatermark is ts - delay - 1 without overflow.
func boundedWatermark(ts, delay int64) int64 {
	if ts < math.MinInt64+delay+1 {
		return abi.NoWatermark
	}
	return ts - delay - 1
}

func (g *wmSource) Process(ctx context.Context, recs []abi.Record) error {
	if len(recs) == 0 {
		return nil
	}
	now := g.clock()
	if err := g.activate(ctx, now); err != nil {
		return err
	}
	switch g.mode {
	case wmIngestion:
		for i := range recs {
			recs[i].Timestamp = now
		}
		if err := g.next.Process(ctx, recs); err != nil {
			return err
		}
		if g.interval == 0 {
			return g.emit(ctx, now-1)
		}
		return nil
	case wmPunctuated:
		return g.punct.process(ctx, g, recs)
	}
	sp := &g.splits[g.split]
	if g.interval > 0 {
		for i := range recs {
			sp.maxTs = max(sp.maxTs, recs[i].Timestamp)
		}
		g.valve.Update(g.split, boundedWatermark(sp.maxTs, g.delay))
		return g.next.Process(ctx, recs)
	}
	start := 0
	for i := range recs {
		if recs[i].Timestamp <= sp.maxTs {
			continue
		}
		sp.maxTs = recs[i].Timestamp
		if wm, advanced := g.valve.Update(g.split, boundedWatermark(sp.maxTs, g.delay)); advanced {
			if err := g.next.Process(ctx, recs[start:i+1]); err != nil {
				return err
			}
			start = i + 1
			if err := g.emit(ctx, wm); err != nil {
				return err
			}
		}
	}
	if start < len(recs) {
		return g.next.Process(ctx, recs[start:])
	}
	return nil
}

// activate marks the current split (and so the subtask) active before its
// records go on.
func (g *wmSource) activate(ctx context.Context, now int64) error {
	if len(g.splits) > 0 {
		sp := &g.splits[g.split]
		sp.lastActive, sp.idle = now, false
		g.valve.SetIdle(g.split, false)
	}
	if !g.idle {
		return nil
	}
	g.idle = false
	return g.announce(ctx, false)
}

// punctuation applies a watermark a watermark function emitted for the
// current split.
func (g *wmSource) punctuation(ctx context.Context, wm int64) error {
	sp := &g.splits[g.split]
	sp.punctWM = max(sp.punctWM, wm)
	if combined, advanced := g.valve.Update(g.split, wm); advanced {
		return g.emit(ctx, combined)
	}
	return nil
}

// emit passes a watermark on unless it is not above the last one.
func (g *wmSource) emit(ctx context.Context, wm int64) error {
	if wm <= g.emitted {
		return nil
	}
	g.emitted = wm
	return g.next.Advance(ctx, wm)
}

// Advance passes the end of input (MaxWatermark) on.
func (g *wmSource) Advance(ctx context.Context, wm int64) error { return g.emit(ctx, wm) }

// Tick marks splits idle, emits the periodic watermark and tells the
// consumers when every split is idle.
func (g *wmSource) Tick(ctx context.Context, now int64) error {
	if g.idleAfter > 0 && g.mode != wmIngestion {
		for i := range g.splits {
			if now-g.splits[i].lastActive >= g.idleAfter {
				g.splits[i].idle = true
				g.valve.SetIdle(i, true)
			}
		}
	}
	due := g.interval == 0 || g.mode == wmPunctuated || now >= g.nextEmit
	if due {
		if g.interval > 0 {
			g.nextEmit = now + g.interval
		}
		wm := g.valve.Current()
		if g.mode == wmIngestion {
			wm = now - 1
		}
		if err := g.emit(ctx, wm); err != nil {
			return err
		}
	}
	if !g.idle && g.mode != wmIngestion && (len(g.splits) == 0 || g.idleAfter > 0 && g.valve.Idle()) {
		g.idle = true
		if err := g.announce(ctx, true); err != nil {
			return err
		}
	}
	return g.next.Tick(ctx, now)
}

func (g *wmSource) Finish(ctx context.Context) error { return g.next.Finish(ctx) }

func (g *wmSource) Close(ctx context.Context) error {
	if g.punct != nil {
		return errors.Join(g.punct.close(ctx), g.next.Close(ctx))
	}
	return g.next.Close(ctx)
}
