package watermark

import (
	"context"
	"errors"
	"math"
	"time"

	"wasmstream.io/platform/abi"
)

// Output is what follows a generator in its task's chain: the records, the
// watermarks and the processing time it passes on.
type Output interface {
	Process(ctx context.Context, recs []abi.Record) error
	Advance(ctx context.Context, wm int64) error
	Tick(ctx context.Context, now int64) error
	Finish(ctx context.Context) error
	Close(ctx context.Context) error
}

// nowMillis is the processing time: milliseconds since the epoch.
func nowMillis() int64 { return time.Now().UnixMilli() }

// Mode is how a source subtask makes watermarks.
type Mode int

const (
	// Bounded: the largest timestamp seen, less the out-of-orderness
	// bound, less 1 (monotonous is a bound of 0).
	Bounded Mode = iota
	// Punctuated: the watermarks a watermark function emits after records.
	Punctuated
	// Ingestion: records take the processing time as their timestamp and
	// the watermark follows the clock.
	Ingestion
)

// Generator generates a source subtask's watermarks. Each split (subject
// filter) has its own watermark; the subtask emits their minimum over the
// splits that are not idle (a Valve). A split without records for
// idleAfter is idle; when every split is idle the subtask tells its
// consumers. Watermarks go out every interval of processing time, or after
// the record that raised them when interval is 0 (and always so for
// punctuated watermarks).
type Generator struct {
	mode      Mode
	delay     int64
	interval  int64
	idleAfter int64
	// Split is the Split of the records process receives; the source task
	// sets it.
	Split  int
	splits []splitTime
	// Names identify the splits in checkpoints, across parallelisms.
	Names []string
	valve *Valve
	// emitted is the last watermark passed on; nextEmit is when the next
	// periodic one is due.
	emitted  int64
	nextEmit int64
	idle     bool
	// announce tells the task's consumers the subtask is idle or active.
	announce func(ctx context.Context, idle bool) error
	// Punct runs the watermark function of the punctuated mode.
	Punct Punctuator
	// Clock is the processing time (nowMillis; tests set their own).
	Clock func() int64
	next  Output
}

// Punctuator is a watermark function: it runs over a split's records and
// passes them on with g.Pass, stopping after each record it punctuated to
// report that record's watermark with g.Punctuation.
type Punctuator interface {
	Punctuate(ctx context.Context, g *Generator, recs []abi.Record) error
	Close(ctx context.Context) error
}

// Mode is how the generator makes watermarks.
func (g *Generator) Mode() Mode { return g.mode }

// Splits is the number of splits the generator follows.
func (g *Generator) Splits() int { return len(g.splits) }

// Pass hands records on to what follows the generator.
func (g *Generator) Pass(ctx context.Context, recs []abi.Record) error {
	return g.next.Process(ctx, recs)
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

func NewGenerator(mode Mode, delay, interval, idleAfter int64, announce func(context.Context, bool) error, next Output) *Generator {
	return &Generator{
		mode: mode, delay: delay, interval: interval, idleAfter: idleAfter,
		emitted: abi.NoWatermark, announce: announce, Clock: nowMillis, next: next,
	}
}

// SetSplits sizes the generator for the splits its subtask reads, all active
// from now.
func (g *Generator) SetSplits(n int) {
	g.splits = make([]splitTime, n)
	g.valve = NewValve(n)
	now := g.Clock()
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

func (g *Generator) Process(ctx context.Context, recs []abi.Record) error {
	if len(recs) == 0 {
		return nil
	}
	now := g.Clock()
	if err := g.activate(ctx, now); err != nil {
		return err
	}
	switch g.mode {
	case Ingestion:
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
	case Punctuated:
		return g.Punct.Punctuate(ctx, g, recs)
	}
	sp := &g.splits[g.Split]
	if g.interval > 0 {
		for i := range recs {
			sp.maxTs = max(sp.maxTs, recs[i].Timestamp)
		}
		g.valve.Update(g.Split, boundedWatermark(sp.maxTs, g.delay))
		return g.next.Process(ctx, recs)
	}
	start := 0
	for i := range recs {
		if recs[i].Timestamp <= sp.maxTs {
			continue
		}
		sp.maxTs = recs[i].Timestamp
		if wm, advanced := g.valve.Update(g.Split, boundedWatermark(sp.maxTs, g.delay)); advanced {
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
func (g *Generator) activate(ctx context.Context, now int64) error {
	if len(g.splits) > 0 {
		sp := &g.splits[g.Split]
		sp.lastActive, sp.idle = now, false
		g.valve.SetIdle(g.Split, false)
	}
	if !g.idle {
		return nil
	}
	g.idle = false
	return g.announce(ctx, false)
}

// Punctuation applies a watermark a watermark function emitted for the
// current split.
func (g *Generator) Punctuation(ctx context.Context, wm int64) error {
	sp := &g.splits[g.Split]
	sp.punctWM = max(sp.punctWM, wm)
	if combined, advanced := g.valve.Update(g.Split, wm); advanced {
		return g.emit(ctx, combined)
	}
	return nil
}

// emit passes a watermark on unless it is not above the last one.
func (g *Generator) emit(ctx context.Context, wm int64) error {
	if wm <= g.emitted {
		return nil
	}
	g.emitted = wm
	return g.next.Advance(ctx, wm)
}

// Advance passes the end of input (MaxWatermark) on.
func (g *Generator) Advance(ctx context.Context, wm int64) error { return g.emit(ctx, wm) }

// Tick marks splits idle, emits the periodic watermark and tells the
// consumers when every split is idle.
func (g *Generator) Tick(ctx context.Context, now int64) error {
	if g.idleAfter > 0 && g.mode != Ingestion {
		for i := range g.splits {
			if now-g.splits[i].lastActive >= g.idleAfter {
				g.splits[i].idle = true
				g.valve.SetIdle(i, true)
			}
		}
	}
	due := g.interval == 0 || g.mode == Punctuated || now >= g.nextEmit
	if due {
		if g.interval > 0 {
			g.nextEmit = now + g.interval
		}
		wm := g.valve.Current()
		if g.mode == Ingestion {
			wm = now - 1
		}
		if err := g.emit(ctx, wm); err != nil {
			return err
		}
	}
	if !g.idle && g.mode != Ingestion && (len(g.splits) == 0 || g.idleAfter > 0 && g.valve.Idle()) {
		g.idle = true
		if err := g.announce(ctx, true); err != nil {
			return err
		}
	}
	return g.next.Tick(ctx, now)
}

func (g *Generator) Finish(ctx context.Context) error { return g.next.Finish(ctx) }

func (g *Generator) Close(ctx context.Context) error {
	if g.Punct != nil {
		return errors.Join(g.Punct.Close(ctx), g.next.Close(ctx))
	}
	return g.next.Close(ctx)
}
