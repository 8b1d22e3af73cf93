package runtime

import (
	"errors"
	"time"

	"wasmstream.io/platform/abi"
)

// Errors callers branch on. The API maps them to HTTP statuses.
var (
	// ErrNotFound: no module or job has that id.
	ErrNotFound = errors.New("not found")
	// ErrInUse: a module cannot be deleted while a job uses it.
	ErrInUse = errors.New("in use")
	// ErrInvalidJob wraps a job that names modules or functions that do not
	// fit (missing module, missing function, wrong kind).
	ErrInvalidJob = errors.New("invalid job")
	// ErrFinished: the job already reached a terminal state.
	ErrFinished = errors.New("job already finished")
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
	ID        string         `json:"id"`
	Size      int            `json:"size"`
	Functions []abi.Function `json:"functions"`
	States    []abi.State    `json:"states,omitempty"`
	Uploaded  time.Time      `json:"uploaded"`
	UsedBy    []string       `json:"used_by,omitempty"`
}

// JobInfo is a job's state and its vertices.
type JobInfo struct {
	ID       string       `json:"id"`
	Name     string       `json:"name"`
	State    JobState     `json:"state"`
	Created  time.Time    `json:"created"`
	Ended    *time.Time   `json:"ended,omitempty"`
	Failure  string       `json:"failure,omitempty"`
	Vertices []VertexInfo `json:"vertices,omitempty"`
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
	Watermark    *int64  `json:"watermark,omitempty"`
}
