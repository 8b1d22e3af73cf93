package exec

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/broadcast"
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
	blobBroadcast = broadcast.BlobKind
)

func blobName(kind, vertex string, subtask int) string {
	return checkpoint.BlobName(kind, vertex, subtask)
}

// blobDeadLetters is the kind of blob holding the dead letters a task of an
// exactly-once job staged and has not committed. They are the task's
// output, not an operator's state: the blob is named after the task,
// "deadletters~<chain head>[<subtask>]", in two parts, so that the restore's
// check of operator state does not apply to it, and a restore whose chains
// changed hands it to another task (builder.deadLetterEpochs) instead of
// refusing or dropping it.
const blobDeadLetters = "deadletters"

func deadLetterBlob(head string, subtask int) string {
	return blobDeadLetters + "~" + head + "[" + strconv.Itoa(subtask) + "]"
}

// parseDeadLetterBlob reads the chain head and subtask of a dead-letter
// blob's name.
func parseDeadLetterBlob(name string) (head string, subtask int, ok bool) {
	rest, ok := strings.CutPrefix(name, blobDeadLetters+"~")
	if !ok || !strings.HasSuffix(rest, "]") {
		return "", 0, false
	}
	open := strings.LastIndexByte(rest, '[')
	if open <= 0 {
		return "", 0, false
	}
	subtask, err := strconv.Atoi(rest[open+1 : len(rest)-1])
	if err != nil || subtask < 0 {
		return "", 0, false
	}
	return rest[:open], subtask, true
}

// deadLetterPrefix starts the message ids of the dead letters of subtask i
// of the task headed by head. "$" is no identifier character, so they never
// collide with a sink's ids, <job>.<sink>.<subtask>.
func deadLetterPrefix(job, head string, subtask int) string {
	return job + ".$dlq." + head + "." + strconv.Itoa(subtask)
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

// stagingSink is a sink that stages its records in the task's checkpoints
// and writes them once the checkpoint after them completes: the
// exactly-once JetStream (and KV) sink, the object store sink.
type stagingSink interface {
	Write(ctx context.Context, recs []abi.Record) error
	Seal(id int64) error
	Snapshot() (io.Reader, func(), error)
	Close() error
}

// stagingStage is what the stages of staging sinks share: processing
// stages records, and a snapshot seals and stores them.
type stagingStage struct {
	name    string
	staging stagingSink
}

func (s *stagingStage) Process(ctx context.Context, recs []abi.Record) error {
	return s.staging.Write(ctx, recs)
}

func (s *stagingStage) Advance(context.Context, int64) error { return nil }
func (s *stagingStage) Tick(context.Context, int64) error    { return nil }

// Finish keeps the staged records: the task writes them once a checkpoint
// holds them (taskCheckpoint.finishInput).
func (s *stagingStage) Finish(context.Context) error { return nil }
func (s *stagingStage) Close(context.Context) error  { return s.staging.Close() }

func (s *stagingStage) snapshot(_ context.Context, id int64) ([]operator.Blob, error) {
	if err := s.staging.Seal(id); err != nil {
		return nil, err
	}
	r, release, err := s.staging.Snapshot()
	if err != nil {
		return nil, err
	}
	return []operator.Blob{{Name: s.name, Reader: r, Release: release}}, nil
}

// txSinkStage is an exactly-once JetStream sink subtask, or a task's
// dead-letter sink in an exactly-once job: records are staged and committed
// when the checkpoint after them completes.
type txSinkStage struct {
	stagingStage
	sink *connector.TxSink
}

func newTxSinkStage(name string, sink *connector.TxSink) *txSinkStage {
	return &txSinkStage{stagingStage: stagingStage{name: name, staging: sink}, sink: sink}
}

func (s *txSinkStage) commit(ctx context.Context, id int64) error { return s.sink.Commit(ctx, id) }
func (s *txSinkStage) staged() bool                               { return s.sink.Staged() > 0 || s.sink.Pending() > 0 }
func (s *txSinkStage) flush(ctx context.Context) error            { return s.sink.Flush(ctx) }
