package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/runtime/operator/process"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
	"wasmstream.io/platform/watermark"
)

// Kinds of checkpoint blob a replay reads, as the runtime names them
// (kind~vertex~subtask): a source subtask's positions and watermark
// generator, a process operator's keyed state, a window operator's
// contents.
const (
	blobPositions = "positions"
	blobWatermark = "watermarks"
	blobKeyed     = process.BlobKind
	blobWindow    = "window"
)

// snapshot is the checkpoint a replay starts from.
type snapshot struct {
	store checkpoint.Store
	meta  *checkpoint.Metadata
}

// findCheckpoint is checkpoint (or savepoint) id of job.
func findCheckpoint(ctx context.Context, store checkpoint.Store, job string, id int64) (*snapshot, error) {
	if store == nil {
		return nil, fmt.Errorf("%w %d: the platform keeps no checkpoints", ErrUnknownCheckpoint, id)
	}
	all, err := store.List(ctx, job)
	var listed *checkpoint.ListError
	if err != nil && !errors.As(err, &listed) {
		return nil, fmt.Errorf("checkpoints of job %s: %w", job, err)
	}
	var ids []string
	for _, m := range all {
		if m.ID == id {
			return &snapshot{store: store, meta: m}, nil
		}
		ids = append(ids, strconv.FormatInt(m.ID, 10))
	}
	if listed != nil {
		for _, bad := range listed.Corrupt {
			if bad.ID == id {
				return nil, bad
			}
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w %d: job %s has no completed checkpoint", ErrUnknownCheckpoint, id, job)
	}
	return nil, fmt.Errorf("%w %d: job %s has checkpoints %s", ErrUnknownCheckpoint, id, job, strings.Join(ids, ", "))
}

// blobs are the blobs of kind for vertex, by the subtask that wrote them.
func (s *snapshot) blobs(kind, vertex string) map[int]checkpoint.Blob {
	return s.meta.SubtaskBlobs(kind, vertex)
}

// read is a blob's bytes, checked against its checksum.
func (s *snapshot) read(ctx context.Context, b checkpoint.Blob) ([]byte, error) {
	return s.store.GetBlob(ctx, s.meta.Job, s.meta.ID, b)
}

// positions merges the positions of every subtask of a source: the last
// stream sequence read, by subject filter.
func (s *snapshot) positions(ctx context.Context, source string) (map[string]uint64, error) {
	out := map[string]uint64{}
	for i, b := range s.blobs(blobPositions, source) {
		data, err := s.read(ctx, b)
		if err != nil {
			return nil, err
		}
		var m map[string]uint64
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("source %s subtask %d positions: %w", source, i, err)
		}
		for f, seq := range m {
			out[f] = max(out[f], seq)
		}
	}
	return out, nil
}

// watermarks are the source's watermark generator snapshots, by subtask.
func (s *snapshot) watermarks(ctx context.Context, source string) (map[int][]watermark.SplitState, error) {
	out := map[int][]watermark.SplitState{}
	for i, b := range s.blobs(blobWatermark, source) {
		data, err := s.read(ctx, b)
		if err != nil {
			return nil, err
		}
		if out[i], err = watermark.DecodeSnapshot(data); err != nil {
			return nil, fmt.Errorf("source %s subtask %d watermarks: %w", source, i, err)
		}
	}
	return out, nil
}

// keyedState opens the keyed-state snapshot of op that holds key group
// kg: one blob, whichever parallelism wrote it.
func (s *snapshot) keyedState(ctx context.Context, op *plan.Vertex, maxP, kg int) ([]io.Reader, error) {
	blobs := s.blobs(blobKeyed, op.ID)
	for _, i := range checkpoint.SubtaskOrder(blobs) {
		data, err := s.read(ctx, blobs[i])
		if err != nil {
			return nil, err
		}
		p, r, err := state.SnapshotRange(data)
		if err != nil {
			return nil, fmt.Errorf("operator %s subtask %d state: %w", op.ID, i, err)
		}
		if p != maxP {
			return nil, fmt.Errorf("operator %s subtask %d state: max parallelism %d, the job has %d", op.ID, i, p, maxP)
		}
		if r.Contains(kg) {
			return []io.Reader{bytes.NewReader(data)}, nil
		}
	}
	return nil, fmt.Errorf("%w: checkpoint %d has no state of operator %q for key group %d (%d snapshots)", ErrKeyNotInCheckpoint, s.meta.ID, op.ID, kg, len(blobs))
}

// windowState opens every window snapshot of op; the operator keeps the
// keys of the key group it is given.
func (s *snapshot) windowState(ctx context.Context, op *plan.Vertex, kg int) ([]io.Reader, error) {
	blobs := s.blobs(blobWindow, op.ID)
	if len(blobs) == 0 {
		return nil, fmt.Errorf("%w: checkpoint %d has no window state of operator %q for key group %d", ErrKeyNotInCheckpoint, s.meta.ID, op.ID, kg)
	}
	return checkpoint.ReadSubtasks(ctx, s.store, s.meta, blobs)
}
