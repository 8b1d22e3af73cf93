package runtime

import (
	"time"

	"wasmstream.io/platform/checkpoint"
)

// blocker is the part of a gate that alignment uses.
type blocker interface {
	Block(channel int)
	Unblock(channel int)
}

// aligner tracks the checkpoint barriers of a gate task's input channels.
// A checkpoint's state is taken once every channel has delivered its barrier
// or ended. In exactly_once mode a channel that delivered the barrier is
// blocked until then, so that no record after the barrier is processed
// before the state is taken (alignment); in at_least_once mode channels are
// not blocked, and records after the barrier may be replayed after a
// recovery. A barrier newer than the one being aligned abandons it; older
// ones are ignored. It belongs to the task goroutine.
type aligner struct {
	exactlyOnce bool
	got         []bool
	closed      []bool
	// cur is the barrier being aligned (active), done the newest aligned.
	cur    checkpoint.Barrier
	active bool
	done   int64
	start  time.Time
}

func newAligner(channels int, exactlyOnce bool) aligner {
	return aligner{exactlyOnce: exactlyOnce, got: make([]bool, channels), closed: make([]bool, channels)}
}

// barrier notes b on channel and reports whether the alignment is complete,
// with the time it took.
func (a *aligner) barrier(g blocker, channel int, b checkpoint.Barrier) (bool, time.Duration) {
	if b.ID <= a.done || a.active && b.ID < a.cur.ID {
		return false, 0
	}
	if !a.active || b.ID > a.cur.ID {
		a.release(g)
		a.cur, a.active, a.start = b, true, time.Now()
	}
	a.got[channel] = true
	if a.complete() {
		return true, a.finish(g)
	}
	if a.exactlyOnce {
		g.Block(channel)
	}
	return false, 0
}

// ended notes the end of channel; when that completes an alignment it
// returns the barrier.
func (a *aligner) ended(g blocker, channel int) (checkpoint.Barrier, time.Duration, bool) {
	a.closed[channel] = true
	if !a.active || !a.complete() {
		return checkpoint.Barrier{}, 0, false
	}
	b := a.cur
	return b, a.finish(g), true
}

func (a *aligner) complete() bool {
	for i, got := range a.got {
		if !got && !a.closed[i] {
			return false
		}
	}
	return true
}

// finish ends the alignment in progress and unblocks the channels.
func (a *aligner) finish(g blocker) time.Duration {
	d := time.Since(a.start)
	a.done = a.cur.ID
	a.release(g)
	return d
}

// release unblocks the channels of the alignment in progress and forgets it.
func (a *aligner) release(g blocker) {
	if a.active && a.exactlyOnce {
		for i, got := range a.got {
			if got {
				g.Unblock(i)
			}
		}
	}
	clear(a.got)
	a.active = false
}
