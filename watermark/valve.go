package watermark

import (
	"math"

	"wasmstream.io/platform/abi"
)

// MaxWatermark is the watermark of the end of input: every event time is
// before it, so it fires every window and timer.
const MaxWatermark = math.MaxInt64

// Valve combines the watermarks of a task's input channels: the combined
// watermark is the minimum over the active channels, and it never goes
// backwards. As in Flink's status watermark valve, a channel that becomes
// active again while behind the combined watermark is not aligned: it is left
// out of the minimum until its watermark catches up. When every channel is
// idle, the combined watermark moves to the largest channel watermark.
type Valve struct {
	channels []channel
	current  int64
}

type channel struct {
	wm      int64
	idle    bool
	aligned bool
}

// NewValve makes a valve over channels input channels, all active and
// without a watermark.
func NewValve(channels int) *Valve {
	v := &Valve{channels: make([]channel, channels), current: abi.NoWatermark}
	for i := range v.channels {
		v.channels[i] = channel{wm: abi.NoWatermark, aligned: true}
	}
	return v
}

// Update records channel's watermark wm (a lower one than the channel's last
// is ignored) and marks the channel active. It returns the combined
// watermark and whether it rose.
func (v *Valve) Update(channel int, wm int64) (combined int64, advanced bool) {
	c := &v.channels[channel]
	c.idle = false
	if wm > c.wm {
		c.wm = wm
	}
	if c.wm >= v.current {
		c.aligned = true
	}
	return v.recompute()
}

// SetIdle marks channel idle or active again. It returns the combined
// watermark and whether it rose (which happens when an idle channel was the
// one holding the minimum back).
func (v *Valve) SetIdle(channel int, idle bool) (combined int64, advanced bool) {
	c := &v.channels[channel]
	if c.idle == idle {
		return v.current, false
	}
	c.idle = idle
	c.aligned = !idle && c.wm >= v.current
	return v.recompute()
}

// Current is the combined watermark: abi.NoWatermark before any.
func (v *Valve) Current() int64 { return v.current }

// Idle reports whether every channel is idle.
func (v *Valve) Idle() bool {
	for i := range v.channels {
		if !v.channels[i].idle {
			return false
		}
	}
	return len(v.channels) > 0
}

func (v *Valve) recompute() (int64, bool) {
	next, found := int64(math.MaxInt64), false
	for i := range v.channels {
		if c := &v.channels[i]; !c.idle && c.aligned {
			next, found = min(next, c.wm), true
		}
	}
	if !found && v.Idle() {
		next = math.MinInt64
		for i := range v.channels {
			next = max(next, v.channels[i].wm)
		}
		found = true
	}
	if !found || next <= v.current {
		return v.current, false
	}
	v.current = next
	return next, true
}
