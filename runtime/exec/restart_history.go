package exec

import (
	"errors"
	"sync"
	"time"
)

// What a job did after a failure, as its exception history records it.
const (
	ActionRestart     = "restart"
	ActionFail        = "fail"
	ActionWaitForNATS = "wait_for_nats"
)

// MaxExceptions bounds a job's exception history: the oldest entries go
// first.
const MaxExceptions = 32

// Exception is one failure of a job's run and what followed it.
type Exception struct {
	Time time.Time `json:"time"`
	// Task and Subtask are the failed subtask (the id of its chain's head
	// and its index); empty when the run failed before its tasks ran (a
	// restore, a build, a connector that could not start).
	Task    string `json:"task,omitempty"`
	Subtask *int   `json:"subtask,omitempty"`
	Error   string `json:"error"`
	// Action is restart, fail (the restart strategy allowed no more, or
	// the job could not be restored) or wait_for_nats (NATS was lost: the
	// job restarts once it is back, without counting a restart).
	Action string `json:"action"`
	// Attempt numbers the restart that followed, as the strategy counts
	// it (exponential counts from 1 again after reset_after); DelayMS is
	// the wait it chose.
	Attempt int   `json:"attempt,omitempty"`
	DelayMS int64 `json:"delay_ms"`
}

// TaskFailure is the error of a run whose subtask failed.
type TaskFailure struct {
	Task    string
	Subtask int
	Err     error
}

func (e *TaskFailure) Error() string { return "task " + e.Task + ": " + e.Err.Error() }

func (e *TaskFailure) Unwrap() error { return e.Err }

func newException(now time.Time, err error, action string, attempt int, delay time.Duration) Exception {
	x := Exception{Time: now.UTC(), Error: err.Error(), Action: action, Attempt: attempt, DelayMS: delay.Milliseconds()}
	var tf *TaskFailure
	if errors.As(err, &tf) {
		subtask := tf.Subtask
		x.Task, x.Subtask = tf.Task, &subtask
	}
	return x
}

// ExceptionHistory is a job's last MaxExceptions failures. It is safe for
// concurrent use; the zero value is empty.
type ExceptionHistory struct {
	mu   sync.Mutex
	ring []Exception
	// next is where the next entry goes once ring is full.
	next int
}

func (h *ExceptionHistory) add(x Exception) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.ring) < MaxExceptions {
		h.ring = append(h.ring, x)
		return
	}
	h.ring[h.next] = x
	h.next = (h.next + 1) % MaxExceptions
}

// List is the history, newest first, as Flink's exception history is.
func (h *ExceptionHistory) List() []Exception {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Exception, 0, len(h.ring))
	for i := range h.ring {
		out = append(out, h.ring[(h.next+len(h.ring)-1-i)%len(h.ring)])
	}
	return out
}
