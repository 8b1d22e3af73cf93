package runtime

import (
	"errors"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/exec"
	"wasmstream.io/platform/runtime/plan"
)

// Errors callers branch on. The API maps them to HTTP statuses.
var (
	// ErrNotFound: no module or job has that id.
	ErrNotFound = errors.New("not found")
	// ErrInUse: a module cannot be deleted while a job uses it.
	ErrInUse = errors.New("in use")
	// ErrInvalidJob wraps a job that names modules or functions that do not
	// fit (missing module, missing function, wrong kind).
	ErrInvalidJob = plan.ErrInvalidJob
	// ErrNoCheckpoints: the job takes no checkpoints, so it has no
	// savepoints either.
	ErrNoCheckpoints = exec.ErrNoCheckpoints
	// ErrFinished: the job already reached a terminal state.
	ErrFinished = errors.New("job already finished")
	// ErrNotEnded: a job that has not ended cannot be deleted.
	ErrNotEnded = errors.New("job has not ended")
	// ErrSavepointInUse: a savepoint a job that has not ended may restore
	// cannot be deleted.
	ErrSavepointInUse = errors.New("savepoint in use")
)

// JobState is a job's state, as in Flink.
type JobState string

// Job states.
const (
	StateCreated    JobState = "CREATED"
	StateRunning    JobState = "RUNNING"
	StateRestarting JobState = "RESTARTING"
	StateFailing    JobState = "FAILING"
	StateFailed     JobState = "FAILED"
	StateCancelling JobState = "CANCELLING"
	StateCanceled   JobState = "CANCELED"
	StateFinished   JobState = "FINISHED"
)

// Terminal reports whether the job can no longer change state.
func (s JobState) Terminal() bool {
	return s == StateFailed || s == StateCanceled || s == StateFinished
}

// ModuleInfo describes an uploaded module.
type ModuleInfo struct {
	ID string `json:"id"`
	// Names are the name@version references that name the module, by name
	// and version.
	Names []string `json:"names,omitempty"`
	// Version is the name@version an upload made or found, or the one a
	// request named the module by.
	Version   string         `json:"version,omitempty"`
	Size      int            `json:"size"`
	Functions []abi.Function `json:"functions"`
	States    []abi.State    `json:"states,omitempty"`
	Uploaded  time.Time      `json:"uploaded"`
	UsedBy    []string       `json:"used_by,omitempty"`
}

// JobInfo is a job's state and its vertices.
type JobInfo struct {
	ID      string     `json:"id"`
	Name    string     `json:"name"`
	State   JobState   `json:"state"`
	Created time.Time  `json:"created"`
	Ended   *time.Time `json:"ended,omitempty"`
	Failure string     `json:"failure,omitempty"`
	// Modules are the modules the spec names, each with the id it
	// resolved to when the job was submitted.
	Modules []JobModule `json:"modules,omitempty"`
	// Worker is the id of the worker that runs the job, in cluster mode.
	Worker string `json:"worker,omitempty"`
	// Restarts counts the restarts after failures.
	Restarts int64 `json:"restarts,omitempty"`
	// Exceptions are the job's last failures (at most
	// exec.MaxExceptions), newest first: when, which subtask, the error,
	// and the restart (its attempt and delay) or failure that followed.
	Exceptions []exec.Exception `json:"exceptions,omitempty"`
	// Checkpoint summarises the job's checkpoints, when it takes them.
	Checkpoint *exec.CheckpointInfo `json:"checkpoint,omitempty"`
	// Warnings are what the platform noticed at submission that the user
	// should know (for example a short duplicate window).
	Warnings []string `json:"warnings,omitempty"`
	// Versions are the job's versions, oldest first (versions.go).
	Versions []VersionInfo `json:"versions,omitempty"`
	// Canary is the canary the job runs, if any, with each version's
	// figures (upgrade_canary.go).
	Canary   *CanaryInfo  `json:"canary,omitempty"`
	Vertices []VertexInfo `json:"vertices,omitempty"`
	Edges    []EdgeInfo   `json:"edges,omitempty"`
}

// JobModule is a module reference of a job spec and what it resolved to at
// submission.
type JobModule struct {
	// Ref is the reference as the spec has it: an id, a name or
	// name@version.
	Ref string `json:"ref"`
	ID  string `json:"id"`
	// Version is the name@version a name resolved to.
	Version string `json:"version,omitempty"`
}

// EdgeInfo is one edge of the job graph.
type EdgeInfo struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Ship is how records cross it: forward, hash, rebalance or broadcast.
	Ship string `json:"ship"`
	// Chained edges are direct calls inside one task; the others go
	// through the exchange.
	Chained bool `json:"chained"`
}

// VertexInfo is one vertex of the execution graph, summed over its subtasks.
type VertexInfo struct {
	ID           string  `json:"id"`
	Kind         string  `json:"kind"`
	Parallelism  int     `json:"parallelism"`
	Task         string  `json:"task"`
	RecordsIn    int64   `json:"records_in"`
	RecordsOut   int64   `json:"records_out"`
	UDFErrors    int64   `json:"udf_errors"`
	Skipped      int64   `json:"skipped"`
	DeadLettered int64   `json:"dead_lettered"`
	Backpressure float64 `json:"backpressure"`
	// Watermark is the least watermark the vertex's subtasks passed on
	// (milliseconds; absent until every subtask has one).
	Watermark *int64 `json:"watermark,omitempty"`
	// LateRecords counts the records a window operator found too late for
	// every window: sent to its late_output, or dropped.
	LateRecords int64 `json:"late_records,omitempty"`
	// Workers, in cluster mode, are the workers that run the vertex's
	// subtasks in the job's current run, by subtask index.
	Workers []string `json:"workers,omitempty"`
}
