package checkpoint

import (
	"errors"
	"fmt"
	"strconv"
)

// FailureReason says why a checkpoint or savepoint failed, in the manner of
// Flink's CheckpointFailureReason. Its String is a stable snake_case name:
// the history's failure_reason and the API show it, and clients branch on
// it.
type FailureReason int

// Reasons a checkpoint fails. The zero value is no failure.
const (
	_ FailureReason = iota
	// ReasonExpired: not every task acknowledged the checkpoint within the
	// timeout.
	ReasonExpired
	// ReasonTaskFailure: a task failed while taking its snapshot (an
	// operator, a source or a transactional sink could not capture its
	// state), and declined.
	ReasonTaskFailure
	// ReasonStorageFailure: writing a blob or the metadata to the
	// checkpoint store failed.
	ReasonStorageFailure
	// ReasonInFlightTooLarge: a task's in-flight data for an unaligned
	// checkpoint grew over its budget, and it declined.
	ReasonInFlightTooLarge
	// ReasonJobStopped: the job's run ended (it failed, was cancelled or
	// stopped) before the checkpoint completed, or before a queued savepoint
	// was triggered.
	ReasonJobStopped
	// ReasonJobNotRunning: a savepoint was requested of a run that has
	// already stopped.
	ReasonJobNotRunning
	// ReasonFenced: the job's fence (its lease, in cluster mode) refused
	// to record the checkpoint's trigger or completion: the job's lease has
	// moved to another process, or the record could not be written. A
	// refused trigger sends no barrier; a refused completion does not
	// count, and its metadata and blobs are deleted.
	ReasonFenced
	numReasons
)

var reasonNames = [numReasons]string{
	ReasonExpired:          "expired",
	ReasonTaskFailure:      "task_failure",
	ReasonStorageFailure:   "storage_failure",
	ReasonInFlightTooLarge: "in_flight_too_large",
	ReasonJobStopped:       "job_stopped",
	ReasonJobNotRunning:    "job_not_running",
	ReasonFenced:           "fenced",
}

// FailureReasons lists every reason, in declaration order.
func FailureReasons() []FailureReason {
	out := make([]FailureReason, 0, numReasons-1)
	for r := ReasonExpired; r < numReasons; r++ {
		out = append(out, r)
	}
	return out
}

// String is the reason's snake_case name, "" for the zero value.
func (r FailureReason) String() string {
	if r < 0 || r >= numReasons {
		return "failure_reason(" + strconv.Itoa(int(r)) + ")"
	}
	return reasonNames[r]
}

// MarshalText writes the reason's name.
func (r FailureReason) MarshalText() ([]byte, error) {
	if r < 0 || r >= numReasons {
		return nil, fmt.Errorf("checkpoint failure reason %d: unknown", int(r))
	}
	return []byte(reasonNames[r]), nil
}

// UnmarshalText reads a reason's name; "" is the zero value.
func (r *FailureReason) UnmarshalText(b []byte) error {
	for i, name := range reasonNames {
		if name == string(b) {
			*r = FailureReason(i)
			return nil
		}
	}
	return fmt.Errorf("checkpoint failure reason %q: unknown", b)
}

// FailureError is why one checkpoint failed. Checkpoint is its id (0 for a
// savepoint refused before it got one), Task is set when a task declined
// it, and Err is the cause, if any.
type FailureError struct {
	Reason     FailureReason
	Checkpoint int64
	Task       string
	Err        error
}

// Error is "checkpoint <id>: <reason>[ (declined by task <task>)]: <cause>",
// without the "checkpoint <id>: " of a request that got no id.
func (e *FailureError) Error() string {
	s := e.Reason.String()
	if e.Checkpoint > 0 {
		s = "checkpoint " + strconv.FormatInt(e.Checkpoint, 10) + ": " + s
	}
	if e.Task != "" {
		s += " (declined by task " + e.Task + ")"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *FailureError) Unwrap() error { return e.Err }

// Is reports a checkpoint a task declined as ErrDeclined.
func (e *FailureError) Is(target error) bool { return target == ErrDeclined && e.Task != "" }

// ErrDeclined matches (errors.Is) a FailureError of a checkpoint a task
// declined.
var ErrDeclined = errors.New("checkpoint declined")

// Reason is the FailureReason err carries, or the zero value when err holds
// no FailureError.
func Reason(err error) FailureReason {
	var fe *FailureError
	if errors.As(err, &fe) {
		return fe.Reason
	}
	return 0
}
