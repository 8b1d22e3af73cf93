package exec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/operator/lookup"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/watermark"
)

// RestoreError is a checkpoint that cannot be restored: the job fails
// instead of restarting, since another attempt would fail the same way.
type RestoreError struct {
	Job        string
	Checkpoint int64
	Err        error
}

func (e *RestoreError) Error() string {
	return fmt.Sprintf("job %s: restore checkpoint %d: %v", e.Job, e.Checkpoint, e.Err)
}

func (e *RestoreError) Unwrap() error { return e.Err }

// RestoreSet is the checkpoint or savepoint a run restores.
type RestoreSet struct {
	store checkpoint.Store
	meta  *checkpoint.Metadata
	// allowNonRestored lets state of operators the job no longer has be
	// dropped (a savepoint's option).
	allowNonRestored bool
	// fellBack says that newer checkpoints of the same job were passed
	// over as corrupt: output committed in their epochs comes again
	// from the replay, and the transactional sinks drop it
	// (connector.TxSink.SkipCommitted).
	fellBack bool
	// skipAfter is the last epoch of the job whose output the restore
	// covers: the restored checkpoint's id, 0 for the savepoint (or
	// checkpoint) of another job the job was submitted from.
	skipAfter int64
}

// fail wraps a restore failure.
func (r *RestoreSet) fail(err error) error {
	return &RestoreError{Job: r.meta.Job, Checkpoint: r.meta.ID, Err: err}
}

// blobs are the blobs of kind for vertex, by old subtask.
func (r *RestoreSet) blobs(kind, vertex string) map[int]checkpoint.Blob {
	return r.meta.SubtaskBlobs(kind, vertex)
}

// read returns a blob's bytes, checked against its checksum.
func (r *RestoreSet) read(ctx context.Context, b checkpoint.Blob) ([]byte, error) {
	data, err := r.store.GetBlob(ctx, r.meta.Job, r.meta.ID, b)
	if err != nil {
		return nil, r.fail(err)
	}
	return data, nil
}

// usable reads every blob of the checkpoint, which checks it against the
// size and SHA-256 its metadata recorded, and decodes those of the kinds
// decoded here (source positions, watermark generators, a sink's staged
// epochs, in-flight data). A blob that is missing, does not match or does
// not decode is a *checkpoint.CorruptError; any other error is one of
// reading it. The state of operators (keyed, window, join) is only checked
// against its checksum here: its operator decodes it when it restores.
func (r *RestoreSet) usable(ctx context.Context) error {
	names := make([]string, 0, len(r.meta.Blobs))
	for name := range r.meta.Blobs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		data, err := r.store.GetBlob(ctx, r.meta.Job, r.meta.ID, r.meta.Blobs[name])
		if err != nil {
			return err
		}
		if err := decodeBlob(name, data); err != nil {
			return &checkpoint.CorruptError{Job: r.meta.Job, ID: r.meta.ID, What: "blob " + name, Reason: err.Error()}
		}
	}
	return nil
}

// decodeBlob decodes a blob of a kind decoded here by its name.
func decodeBlob(name string, data []byte) error {
	kind, _, _ := strings.Cut(name, "~")
	var err error
	switch kind {
	case blobPositions:
		_, err = decodePositions(data)
	case blobWatermark:
		_, err = watermark.DecodeSnapshot(data)
	case blobSink:
		_, err = connector.DecodeEpochs(data)
	case blobInFlight:
		_, err = decodeInFlight(data)
	}
	return err
}

// decodePositions reads a source subtask's positions: the next position
// of each split (a JetStream subject filter's last stream sequence, a
// generator split's next index).
func decodePositions(data []byte) (map[string]uint64, error) {
	var m map[string]uint64
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("positions: %w", err)
	}
	if m == nil {
		return nil, errors.New("positions: null, want an object")
	}
	return m, nil
}

// readers opens every blob of kind for vertex, in old subtask order.
func (r *RestoreSet) readers(ctx context.Context, kind, vertex string) ([]io.Reader, error) {
	out, err := checkpoint.ReadSubtasks(ctx, r.store, r.meta, r.blobs(kind, vertex))
	if err != nil {
		return nil, r.fail(err)
	}
	return out, nil
}

// Check matches the checkpoint's operators with the plan's: each blob must
// belong to a vertex of the same kind, unless a savepoint allows state to
// be left behind.
// NewRestoreSet restores the checkpoint meta describes, from store.
func NewRestoreSet(store checkpoint.Store, meta *checkpoint.Metadata, allowNonRestored bool) *RestoreSet {
	return &RestoreSet{store: store, meta: meta, allowNonRestored: allowNonRestored}
}

func (r *RestoreSet) Check(p *plan.Plan) error {
	var problems []string
	for name := range r.meta.Blobs {
		parts := strings.Split(name, "~")
		if len(parts) != 3 {
			continue
		}
		kind, vertex := parts[0], parts[1]
		v := p.Vertex(vertex)
		ok := v != nil
		fits := ok && (kind == blobPositions && v.Source != nil || kind == blobSink && v.Sink != nil ||
			kind == blobKeyed && v.Kind == "process" || kind == blobWindow && v.Window != nil ||
			kind == blobJoin && v.Join != nil && v.Join.Interval || kind == blobWatermark && v.Source != nil ||
			kind == blobBroadcast && v.Broadcast != nil || kind == blobInFlight || kind == blobQuarantine && v.Source == nil && v.Sink == nil ||
			kind == lookup.BlobKind && v.Op != nil && v.Op.AsyncLookup != nil)
		if fits || r.allowNonRestored {
			continue
		}
		problems = append(problems, fmt.Sprintf("%s state of operator %q has no operator of that kind to go to", kind, vertex))
	}
	if len(problems) == 0 {
		return nil
	}
	sort.Strings(problems)
	problems = slices.Compact(problems)
	return r.fail(fmt.Errorf("%s (allow_non_restored_state=true drops it)", strings.Join(problems, "; ")))
}

// positions merges the positions of every old subtask of a source, by
// subject filter.
func (r *RestoreSet) positions(ctx context.Context, vertex string) (map[string]uint64, error) {
	out := map[string]uint64{}
	for _, b := range r.blobs(blobPositions, vertex) {
		data, err := r.read(ctx, b)
		if err != nil {
			return nil, err
		}
		m, err := decodePositions(data)
		if err != nil {
			return nil, r.fail(fmt.Errorf("source %s %w", vertex, err))
		}
		for f, seq := range m {
			out[f] = max(out[f], seq)
		}
	}
	return out, nil
}

// checkPositions refuses positions beyond the stream's last sequence: the
// stream was recreated or purged, and resuming would silently skip its new
// messages.
func (r *RestoreSet) checkPositions(ctx context.Context, js jetstream.JetStream, source, stream string, pos map[string]uint64) error {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return fmt.Errorf("source %s: stream %q: %w", source, stream, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return fmt.Errorf("source %s: stream %q: %w", source, stream, err)
	}
	filters := make([]string, 0, len(pos))
	for f := range pos {
		filters = append(filters, f)
	}
	sort.Strings(filters)
	for _, f := range filters {
		if seq := pos[f]; seq > info.State.LastSeq {
			return r.fail(fmt.Errorf("%w: source %s filter %q was at stream sequence %d, but stream %q ends at %d (was it deleted, recreated or purged?)",
				ErrPositionBeyondStream, source, f, seq, stream, info.State.LastSeq))
		}
	}
	return nil
}

// ErrPositionBeyondStream: a checkpointed source position is past the
// stream's last sequence.
var ErrPositionBeyondStream = errors.New("checkpointed position beyond the stream's end")

// sinkStates are the sealed epochs that new subtask i of a sink with
// parallelism subtasks commits, those of the old subtasks j with
// j % parallelism == i, and with them the committed records the same old
// subtasks' replays after a fallback had not produced again when the
// checkpoint was taken (connector.TxSink.KeepSkipping).
func (r *RestoreSet) sinkStates(ctx context.Context, vertex string, i, parallelism int) ([]*connector.Epoch, []*connector.Replay, error) {
	var (
		out     []*connector.Epoch
		replays []*connector.Replay
	)
	for j, b := range r.blobs(blobSink, vertex) {
		if j%parallelism != i {
			continue
		}
		data, err := r.read(ctx, b)
		if err != nil {
			return nil, nil, err
		}
		es, replay, err := connector.DecodeSinkState(data)
		if err != nil {
			return nil, nil, r.fail(fmt.Errorf("sink %s subtask %d: %w", vertex, j, err))
		}
		out = append(out, es...)
		replays = append(replays, replay)
	}
	return out, replays, nil
}

// restoredAt is when the restored checkpoint was triggered.
func (r *RestoreSet) restoredAt() time.Time { return r.meta.Created }
