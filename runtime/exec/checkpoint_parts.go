package exec

import (
	"context"
	"encoding/json"
	"strconv"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/join"
	"wasmstream.io/platform/runtime/operator/process"
	"wasmstream.io/platform/runtime/operator/window"
)

// Kinds of blob a task stores, the first part of a blob's name
// "<kind>~<vertex>~<subtask>" ('~' is no identifier character, so names are
// unambiguous).
const (
	blobPositions = "positions"
	blobKeyed     = process.BlobKind
	blobSink      = "sink"
	blobWindow    = window.BlobKind
	blobJoin      = join.BlobKind
	blobWatermark = "watermarks"
)

func blobName(kind, vertex string, subtask int) string {
	return kind + "~" + vertex + "~" + strconv.Itoa(subtask)
}

// positioned is a source that reports where it is: the last stream
// sequence delivered per subject filter.
type positioned interface {
	Positions() map[string]uint64
}

// sourcePart checkpoints a source subtask's positions.
type sourcePart struct {
	name string
	src  positioned
}

func (s *sourcePart) snapshot(context.Context, int64) ([]operator.Blob, error) {
	data, err := json.Marshal(s.src.Positions())
	if err != nil {
		return nil, err
	}
	return []operator.Blob{{Name: s.name, Data: data}}, nil
}

// final is the source's last positions, kept for a task that has ended.
func (s *sourcePart) final() (string, []byte, bool) {
	data, err := json.Marshal(s.src.Positions())
	return s.name, data, err == nil
}

// statefulPart checkpoints an operator's own state.
type statefulPart struct {
	name string
	op   operator.Stateful
}

func (p *statefulPart) snapshot(ctx context.Context, _ int64) ([]operator.Blob, error) {
	b, err := p.op.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	b.Name = p.name
	return []operator.Blob{b}, nil
}

// txSinkStage is an exactly-once JetStream sink subtask: records are staged
// and committed when the checkpoint after them completes.
type txSinkStage struct {
	name string
	sink *connector.TxSink
}

func (s *txSinkStage) Process(ctx context.Context, recs []abi.Record) error {
	return s.sink.Write(ctx, recs)
}

func (s *txSinkStage) Advance(context.Context, int64) error { return nil }
func (s *txSinkStage) Tick(context.Context, int64) error    { return nil }

// Finish keeps the staged output: the task commits it once a checkpoint
// holds it (taskCheckpoint.finishInput).
func (s *txSinkStage) Finish(context.Context) error { return nil }
func (s *txSinkStage) Close(context.Context) error  { return s.sink.Close() }

func (s *txSinkStage) snapshot(_ context.Context, id int64) ([]operator.Blob, error) {
	if err := s.sink.Seal(id); err != nil {
		return nil, err
	}
	r, release, err := s.sink.Snapshot()
	if err != nil {
		return nil, err
	}
	return []operator.Blob{{Name: s.name, Reader: r, Release: release}}, nil
}

func (s *txSinkStage) commit(ctx context.Context, id int64) error { return s.sink.Commit(ctx, id) }
func (s *txSinkStage) staged() bool                               { return s.sink.Staged() > 0 || s.sink.Pending() > 0 }
func (s *txSinkStage) flush(ctx context.Context) error            { return s.sink.Flush(ctx) }
