package exec

import (
	"context"
	"sync/atomic"

	"wasmstream.io/platform/runtime/exchange"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
)

// scriptsProcessingTime reports whether a test stream of the plan moves
// processing time: then every task of the job runs on a scripted clock
// instead of the wall clock. Submission admits such a job only with one
// source, placed on one worker, and aligned checkpoints (runtime/plan).
func scriptsProcessingTime(p *plan.Plan) bool {
	for _, v := range p.Vertices {
		if v.Source == nil || v.Source.TestStream == nil {
			continue
		}
		for _, st := range v.Source.TestStream.Steps {
			if st.AdvanceProcessingTime.Duration > 0 {
				return true
			}
		}
	}
	return false
}

// scriptedClock is a task's processing time in a job whose test stream
// moves it. It starts at 0; the source task sets it as the script
// advances, and the time travels in band, as exchange.ProcessingTime
// events that the exchange writers send when it rises (exchangeOut.Tick).
// A gate task aligns on it as on a checkpoint barrier: a channel that
// delivered a time ahead of the task's is blocked until every channel
// still open has delivered it, so that no record after an advance is
// processed before the advance, nor any record before it after; then the
// task's clock moves and its chain ticks. The clock needs no place in
// checkpoints: the source recomputes it from its restored position and
// sends it before any record.
//
// The task goroutine sets it; now is atomic because state backends may read
// the clock elsewhere.
type scriptedClock struct {
	now atomic.Int64
	// at is the time each input channel delivered last, ended marks the
	// channels that ended, ahead those the clock blocks.
	at    []int64
	ended []bool
	ahead []bool
}

func (c *scriptedClock) read() int64 { return c.now.Load() }

// clockFunc is the processing time the task's operators read: the scripted
// clock's, else the wall clock.
func (t *Task) clockFunc() func() int64 {
	if c := t.time.scripted; c != nil {
		return c.read
	}
	return operator.NowMillis
}

// now is the task's processing time.
func (t *Task) now() int64 {
	if c := t.time.scripted; c != nil {
		return c.read()
	}
	return operator.NowMillis()
}

// setProcessingTime moves a source task's scripted clock to now, after the
// records before the step, and ticks its chain, which sends the time on.
func (t *Task) setProcessingTime(ctx context.Context, now int64) error {
	t.time.scripted.now.Store(now)
	return t.chain.Tick(ctx, now)
}

// startScripted sends a source task's scripted clock on before any record:
// a restored script resumes at a time its consumers, which start at 0,
// learn this way.
func (t *Task) startScripted(ctx context.Context) error {
	if c := t.time.scripted; c != nil && c.read() > 0 {
		return t.chain.Tick(ctx, c.read())
	}
	return nil
}

// clockEvent takes a processing time channel delivered, or (end) the
// channel's end, and moves the clock once every open channel is there.
func (t *Task) clockEvent(ctx context.Context, channel int, at int64, end bool) error {
	c := t.time.scripted
	if c == nil {
		if end {
			return nil
		}
		return unhandledEvent("processing time", channel, exchange.ProcessingTime{Time: at})
	}
	if c.at == nil {
		n := t.gate.NumChannels()
		c.at, c.ended, c.ahead = make([]int64, n), make([]bool, n), make([]bool, n)
	}
	if end {
		c.ended[channel] = true
	} else {
		c.at[channel] = max(c.at[channel], at)
	}
	least, open := int64(0), false
	for i := range c.at {
		if !c.ended[i] && (!open || c.at[i] < least) {
			least, open = c.at[i], true
		}
	}
	if !end && c.at[channel] > max(least, c.read()) && !c.ahead[channel] {
		c.ahead[channel] = true
		t.block(channel, blockedByClock)
	}
	if !open || least <= c.read() {
		return nil
	}
	c.now.Store(least)
	for i := range c.ahead {
		if c.ahead[i] && (c.ended[i] || c.at[i] <= least) {
			c.ahead[i] = false
			t.unblock(i, blockedByClock)
		}
	}
	return t.chain.Tick(ctx, least)
}

// blockReason is why a gate channel is blocked: a channel may be blocked
// for a checkpoint's alignment and the scripted clock's at once, and
// serves again only once neither holds it.
type blockReason uint8

const (
	blockedByBarrier blockReason = 1 << iota
	blockedByClock
)

// gateBlocker blocks a task's gate channels for several reasons at once.
type gateBlocker struct {
	t *Task
	r blockReason
}

func (b gateBlocker) Block(channel int)   { b.t.block(channel, b.r) }
func (b gateBlocker) Unblock(channel int) { b.t.unblock(channel, b.r) }

// alignBlocker is what a checkpoint's alignment blocks channels through:
// the gate itself on the wall clock, which blocks no channel.
func (t *Task) alignBlocker() blocker {
	if t.time.scripted == nil {
		return t.gate
	}
	return gateBlocker{t, blockedByBarrier}
}

func (t *Task) block(channel int, r blockReason) {
	if t.blocked == nil {
		t.blocked = make([]blockReason, t.gate.NumChannels())
	}
	if t.blocked[channel] == 0 {
		t.gate.Block(channel)
	}
	t.blocked[channel] |= r
}

func (t *Task) unblock(channel int, r blockReason) {
	if t.blocked == nil {
		return
	}
	was := t.blocked[channel]
	t.blocked[channel] &^= r
	if was != 0 && t.blocked[channel] == 0 {
		t.gate.Unblock(channel)
	}
}
