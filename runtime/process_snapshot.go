package runtime

import (
	"context"
	"fmt"
	"io"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/state"
)

// snapshot captures the operator's keyed state and timers, the part of a
// checkpoint its subtask contributes. It runs on the task goroutine between
// batches and costs little; the snapshot is written afterwards, on any
// goroutine, while the operator goes on.
func (op *processOp) snapshot(ctx context.Context) (*state.Snapshot, error) {
	var timers []state.Timer
	for _, d := range []abi.TimeDomain{abi.EventTime, abi.ProcessingTime} {
		for _, t := range op.Timers.Timers(d) {
			timers = append(timers, state.Timer{Domain: uint8(d), Timestamp: t.Timestamp, Key: t.Key, Namespace: t.Namespace})
		}
	}
	s, err := op.Keyed.Snapshot(ctx, timers)
	if err != nil {
		return nil, fmt.Errorf("operator[%s]: %w", op.vertex, err)
	}
	return s, nil
}

// restore loads, before the first batch, the state and timers of the key
// groups the subtask owns from snapshots taken at any parallelism.
func (op *processOp) restore(ctx context.Context, srcs []io.Reader) error {
	timers, err := op.Keyed.Restore(ctx, srcs)
	if err != nil {
		return fmt.Errorf("operator[%s]: %w", op.vertex, err)
	}
	for _, t := range timers {
		op.Timers.Register(abi.TimeDomain(t.Domain), t.Timestamp, t.Key, t.Namespace)
	}
	return nil
}
