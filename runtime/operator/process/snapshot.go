package process

import (
	"context"
	"fmt"
	"io"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/state"
)

// BlobKind is the kind of a process operator's snapshot blobs.
const BlobKind = "keyed"

// StateKind is the kind of a process operator's snapshot blobs.
func (op *Operator) StateKind() string { return BlobKind }

// Snapshot captures the operator's keyed state and timers, the part of a
// checkpoint its subtask contributes. It runs on the task goroutine between
// batches and costs little; the snapshot is written afterwards, on any
// goroutine, while the operator goes on.
func (op *Operator) Snapshot(ctx context.Context) (operator.Blob, error) {
	s, err := op.snapshot(ctx)
	if err != nil {
		return operator.Blob{}, err
	}
	return operator.Blob{
		Write: func(ctx context.Context, w io.Writer) error {
			_, err := s.WriteTo(ctx, w)
			return err
		},
		Release: s.Release,
	}, nil
}

func (op *Operator) snapshot(ctx context.Context) (*state.Snapshot, error) {
	var timers []state.Timer
	for _, d := range []abi.TimeDomain{abi.EventTime, abi.ProcessingTime} {
		for _, t := range op.timers.Timers(d) {
			timers = append(timers, state.Timer{Domain: uint8(d), Timestamp: t.Timestamp, Key: t.Key, Namespace: t.Namespace})
		}
	}
	s, err := op.keyed.Snapshot(ctx, timers)
	if err != nil {
		return nil, fmt.Errorf("operator[%s]: %w", op.vertex, err)
	}
	return s, nil
}

// Restore loads, before the first batch, the state and timers of the key
// groups the subtask owns from snapshots taken at any parallelism. The
// operator's keyed state already knows its key groups.
func (op *Operator) Restore(ctx context.Context, srcs []io.Reader, _ int, _ state.Range) error {
	timers, err := op.keyed.Restore(ctx, srcs)
	if err != nil {
		return fmt.Errorf("operator[%s]: %w", op.vertex, err)
	}
	for _, t := range timers {
		op.timers.Register(abi.TimeDomain(t.Domain), t.Timestamp, t.Key, t.Namespace)
	}
	return op.migrate(ctx)
}
