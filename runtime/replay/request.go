package replay

import (
	"errors"
	"log/slog"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/plan"
)

// Request is what to replay.
type Request struct {
	// Checkpoint is the id of a completed checkpoint or savepoint of the
	// job.
	Checkpoint int64 `json:"checkpoint"`
	// Key is the key to replay, as the job's key selection makes it.
	Key Bytes `json:"key"`
	// Operator is the keyed operator; empty picks the job's only one.
	Operator string `json:"operator,omitempty"`
	// Module, when set, is another module (an id) whose operator runs
	// beside the recorded one on the same inputs: the report then
	// compares their outputs.
	Module string `json:"module,omitempty"`
	// Until stops after the record at this stream sequence; 0 reads to
	// the stream's end when the replay began.
	Until uint64 `json:"until,omitempty"`
	// Records stops after this many records of the key; 0 has no limit.
	Records int `json:"records,omitempty"`
}

// Env is what a replay reads: the job's plan and modules, its checkpoints
// and the source's stream.
type Env struct {
	// Job is the job's id, Plan its plan.
	Job  string
	Plan *plan.Plan
	// Module finds an uploaded module by id.
	Module      func(id string) (*host.Module, bool)
	Checkpoints checkpoint.Store
	JetStream   jetstream.JetStream
	Log         *slog.Logger
}

// Errors callers branch on (the API's problem kinds).
var (
	// ErrUnknownCheckpoint: the job has no such completed checkpoint.
	ErrUnknownCheckpoint = errors.New("unknown checkpoint")
	// ErrNotKeyed: the operator is not a keyed one (a process function or
	// a window after key_by), or the job has none or several and the
	// request names none.
	ErrNotKeyed = errors.New("operator not keyed")
	// ErrKeyNotInCheckpoint: no state snapshot of the operator in the
	// checkpoint covers the key's key group.
	ErrKeyNotInCheckpoint = errors.New("key not in any key group of the checkpoint")
	// ErrSourceGone: the source's stream no longer exists, or no longer
	// holds the records since the checkpoint.
	ErrSourceGone = errors.New("source stream gone")
	// ErrUnsupported: a job shape replay cannot run (named in the error).
	ErrUnsupported = errors.New("not supported by replay")
	// ErrBadRequest: a request field is invalid (named in the error).
	ErrBadRequest = errors.New("bad replay request")
)
