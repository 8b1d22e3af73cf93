package lookup

import (
	"context"
	"fmt"
	"io"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/state"
)

// BlobKind names the operator's snapshot blobs.
const BlobKind = "lookup"

// StateKind names the operator's snapshot blobs: BlobKind.
func (o *Op) StateKind() string { return BlobKind }

// Snapshot captures the records not yet emitted, in queue order (an input
// frame): whether their lookups completed or not, they are looked up again
// after a restore, as Flink's AsyncWaitOperator does. The watermarks
// waiting in the queue are not kept: the restored sources and valves send
// them again behind the restored records.
func (o *Op) Snapshot(ctx context.Context) (operator.Blob, error) {
	var data []byte
	n := 0
	data = abi.AppendInputHeader(data, 0)
	for _, e := range o.queue {
		if e.watermark {
			continue
		}
		data = abi.AppendRecord(data, &e.rec)
		n++
	}
	for i := range o.restored {
		data = abi.AppendRecord(data, &o.restored[i])
		n++
	}
	abi.SetCount(data, uint32(n))
	return operator.Blob{Data: data}, nil
}

// Restore keeps the records of the former subtasks' snapshots whose key
// falls in keyGroups, so that after a rescale each is looked up again by
// exactly one subtask; the first call after the restore issues them.
func (o *Op) Restore(ctx context.Context, srcs []io.Reader, maxParallelism int, keyGroups state.Range) error {
	for i, src := range srcs {
		data, err := io.ReadAll(src)
		if err != nil {
			return fmt.Errorf("lookup snapshot %d: %w", i, err)
		}
		var r abi.InputReader
		if err := r.Reset(data); err != nil {
			return fmt.Errorf("lookup snapshot %d: %w", i, err)
		}
		var rec abi.Record
		for r.Next(&rec) {
			if !keyGroups.Contains(state.KeyGroup(rec.Key, maxParallelism)) {
				continue
			}
			var buf []byte
			o.restored = append(o.restored, copyRecord(&buf, &rec))
		}
		if err := r.Err(); err != nil {
			return fmt.Errorf("lookup snapshot %d: %w", i, err)
		}
	}
	return nil
}
