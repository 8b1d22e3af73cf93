package runtime

import (
	"sync/atomic"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
)

// counters are one subtask's figures for one vertex. The task goroutine
// writes them; the API reads them.
type counters struct {
	in, out atomic.Int64
	operator.ErrorCounts
	// busy times the vertex's stage (see inMeter).
	busy busyClock
	// late counts records too late for every window (window operators).
	late atomic.Int64
	// watermark is the last watermark the vertex passed on, or
	// abi.NoWatermark.
	watermark atomic.Int64
}

// newCounters makes a subtask's counters, without a watermark yet.
func newCounters() *counters {
	c := &counters{}
	c.watermark.Store(abi.NoWatermark)
	return c
}
