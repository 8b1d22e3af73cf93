package exec

import (
	"sync/atomic"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/state"
)

// Counters are one subtask's figures for one vertex. The task goroutine
// writes them; the API reads them.
type Counters struct {
	In  atomic.Int64
	Out atomic.Int64
	operator.ErrorCounts
	// busy times the vertex's stage (see inMeter).
	busy busyClock
	// Late counts records too Late for every window (window operators).
	Late atomic.Int64
	// Gaps counts the sequence gaps a JetStream source went on past
	// (on_gap: skip).
	Gaps atomic.Int64
	// Watermark is the last Watermark the vertex passed on, or
	// abi.NoWatermark.
	Watermark atomic.Int64
	// Printed keeps the last records of a print sink (print.go).
	Printed atomic.Pointer[PrintRing]
	// State is the subtask's keyed state while it runs, for its metrics.
	State atomic.Pointer[state.Keyed]
}

// NewCounters makes a subtask's counters, without a watermark yet.
func NewCounters() *Counters {
	c := &Counters{}
	c.Watermark.Store(abi.NoWatermark)
	return c
}
