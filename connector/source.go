package connector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"wasmstream.io/platform/abi"
)

// Source reads records. One Source serves one source subtask; it is not safe
// for concurrent use.
type Source interface {
	// Fetch appends up to max records to b. It waits at most wait for the
	// first record and returns nil with nothing appended if none came.
	// When bounded input is exhausted it returns io.EOF; records appended
	// in the same call are still valid.
	Fetch(ctx context.Context, b *abi.Batch, max int, wait time.Duration) error
	// Close releases the source.
	Close() error
}

// SplitSource is a source whose records come from several splits, each in
// its own order and with its own event time: a JetStream source's subject
// filters. Watermarks are generated per split.
type SplitSource interface {
	Source
	// Splits is the number of splits the subtask reads.
	Splits() int
	// LastSplits is the split index of each record the last Fetch appended,
	// in order. It is valid until the next Fetch.
	LastSplits() []int32
}

// ErrClosed is returned by a source or sink used after Close.
var ErrClosed = errors.New("connector: closed")

func checkSubtask(subtask, parallelism int) error {
	if parallelism < 1 {
		return fmt.Errorf("parallelism %d: must be at least 1", parallelism)
	}
	if subtask < 0 || subtask >= parallelism {
		return fmt.Errorf("subtask %d: must be in [0, %d)", subtask, parallelism)
	}
	return nil
}

var _ SplitSource = (*JetStreamSource)(nil)
