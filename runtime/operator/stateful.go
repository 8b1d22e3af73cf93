package operator

import (
	"context"
	"io"

	"wasmstream.io/platform/state"
)

// Stateful is an operator with state of its own that checkpoints capture:
// window contents, keyed state and timers, join buffers. It owns the format
// of its snapshot and how it is restored, at any parallelism.
type Stateful interface {
	Stage
	// StateKind names the kind of its snapshots' blobs ("window", "keyed",
	// "join"): a restore reads every blob of that kind that the vertex's
	// former subtasks wrote.
	StateKind() string
	// Snapshot captures the state at a barrier, on the task goroutine
	// between batches. The blob (named by the caller) may be written
	// afterwards, on another goroutine, while the operator goes on.
	Snapshot(ctx context.Context) (Blob, error)
	// Restore loads, before the first batch, the state of the key groups
	// in keyGroups (of maxParallelism) from the snapshots of every former
	// subtask, whatever their parallelism was.
	Restore(ctx context.Context, srcs []io.Reader, maxParallelism int, keyGroups state.Range) error
}
