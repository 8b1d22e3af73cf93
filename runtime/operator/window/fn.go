package window

import (
	"context"

	"wasmstream.io/platform/abi"
)

// windowFunc computes a window operator's results from its slots: a
// built-in aggregate, a UDF aggregate or reduce (accumulators the host
// stores), or a UDF process function (records the host buffers). Calls into
// Wasm are batched: add only queues records, and flush, merge and fire each
// make one call for all the slots or windows they are given.
type windowFunc interface {
	// add folds rec into slot s of key ks (now, or at the next flush).
	add(ctx context.Context, ks *keyState, s *slot, rec *abi.Record) error
	// flush folds the queued records into their slots.
	flush(ctx context.Context) error
	// merge folds slots into others (merging sessions); the slots merged
	// from are released by the caller afterwards.
	merge(ctx context.Context, ms []slotMerge) error
	// fire emits the result of each window.
	fire(ctx context.Context, fs []firing) error
	close(ctx context.Context) error
}

// firing is one window of one key to emit: its bounds and the slots that
// make it up (one for a tumbling pane or a session, several for a sliding
// window or a count window).
type firing struct {
	key        []byte
	start, end int64
	slots      []*slot
}

// slotMerge folds the slots from into the slot into, of one key.
type slotMerge struct {
	key  []byte
	into *slot
	from []*slot
}
