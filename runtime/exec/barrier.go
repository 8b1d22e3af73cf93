package exec

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
// An aligned checkpoint's state is taken once every channel has delivered
// its barrier or ended. In exactly_once mode a channel that delivered the
// barrier is blocked until then, so that no record after the barrier is
// processed before the state is taken (alignment); in at_least_once mode
// channels are not blocked, and records after the barrier may be replayed
// after a recovery. An unaligned checkpoint's state is taken at its first
// barrier, and no channel is blocked: until each channel delivers the
// barrier, what arrives on it is in-flight data of the checkpoint
// (checkpoint_inflight_task.go). A barrier newer than the one being aligned
// abandons it; older ones are ignored. It belongs to the task goroutine.
type aligner struct {
	exactlyOnce bool
	got         []bool
	closed      []bool
	// cur is the barrier being aligned (active), done the newest aligned;
	// blocking: cur's channels are blocked as they deliver it.
	cur      checkpoint.Barrier
	active   bool
	blocking bool
	done     int64
	start    time.Time
}

func newAligner(channels int, exactlyOnce bool) aligner {
	return aligner{exactlyOnce: exactlyOnce, got: make([]bool, channels), closed: make([]bool, channels)}
}

// barrier notes b on channel. first reports that b is the first barrier of
// an unaligned checkpoint (overtakes), to be taken at once; done that every
// channel has delivered b or ended, with the time alignment took.
func (a *aligner) barrier(g blocker, channel int, b checkpoint.Barrier, overtakes bool) (first, done bool, took time.Duration) {
	if b.ID <= a.done || a.active && b.ID < a.cur.ID {
		return false, false, 0
	}
	if !a.active || b.ID > a.cur.ID {
		a.release(g)
		a.cur, a.active, a.start = b, true, time.Now()
		a.blocking, first = a.exactlyOnce && !overtakes, overtakes
	}
	a.got[channel] = true
	if a.complete() {
		return first, true, a.finish(g)
	}
	if a.blocking {
		g.Block(channel)
	}
	return first, false, 0
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

// waiting says whether channel has yet to deliver the barrier in progress.
func (a *aligner) waiting(channel int) bool {
	return a.active && !a.got[channel] && !a.closed[channel]
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
	if a.active && a.blocking {
		for i, got := range a.got {
			if got {
				g.Unblock(i)
			}
		}
	}
	clear(a.got)
	a.active = false
}
