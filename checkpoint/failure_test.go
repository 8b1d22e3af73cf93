package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"testing"
	"time"
)

// TestFailureReasonNames: every reason has a distinct snake_case name that
// survives a JSON round trip, and the zero value has none.
func TestFailureReasonNames(t *testing.T) {
	want := []string{"expired", "task_failure", "storage_failure", "in_flight_too_large", "job_stopped", "job_not_running", "fenced"}
	reasons := FailureReasons()
	if len(reasons) != len(want) {
		t.Fatalf("%d reasons %v, want %d", len(reasons), reasons, len(want))
	}
	snake := regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)
	for i, r := range reasons {
		if r.String() != want[i] || !snake.MatchString(r.String()) {
			t.Errorf("reason %d is %q, want %q", i, r, want[i])
		}
		data, err := json.Marshal(r)
		if err != nil || string(data) != `"`+want[i]+`"` {
			t.Errorf("marshal %v: %s, %v", r, data, err)
		}
		var back FailureReason
		if err := json.Unmarshal(data, &back); err != nil || back != r {
			t.Errorf("unmarshal %s: %v, %v", data, back, err)
		}
	}
	var zero FailureReason
	if zero.String() != "" {
		t.Errorf("zero reason is %q", zero)
	}
	var r FailureReason
	if err := json.Unmarshal([]byte(`"exploded"`), &r); err == nil || err.Error() != `checkpoint failure reason "exploded": unknown` {
		t.Errorf("unmarshal an unknown reason: %v", err)
	}
	if _, err := json.Marshal(numReasons); err == nil {
		t.Error("marshalled a reason out of range")
	}
}

// TestFailureError: the error says the checkpoint, the reason, the task
// that declined and the cause; callers find the reason with errors.As, the
// cause with errors.Is, and a task's decline as ErrDeclined.
func TestFailureError(t *testing.T) {
	cause := errors.New("disk full")
	declined := error(&FailureError{Reason: ReasonStorageFailure, Checkpoint: 7, Task: "split[1]", Err: cause})
	if got := declined.Error(); got != "checkpoint 7: storage_failure (declined by task split[1]): disk full" {
		t.Errorf("declined: %q", got)
	}
	wrapped := errors.Join(errors.New("other"), declined)
	var fe *FailureError
	if !errors.As(wrapped, &fe) || fe.Reason != ReasonStorageFailure || fe.Checkpoint != 7 || fe.Task != "split[1]" {
		t.Errorf("errors.As: %+v", fe)
	}
	if !errors.Is(wrapped, cause) || !errors.Is(wrapped, ErrDeclined) || Reason(wrapped) != ReasonStorageFailure {
		t.Errorf("errors.Is of %v: cause %t, declined %t, reason %v", wrapped, errors.Is(wrapped, cause), errors.Is(wrapped, ErrDeclined), Reason(wrapped))
	}
	own := error(&FailureError{Reason: ReasonExpired, Checkpoint: 3})
	if own.Error() != "checkpoint 3: expired" || errors.Is(own, ErrDeclined) {
		t.Errorf("coordinator's failure %q, declined %t", own, errors.Is(own, ErrDeclined))
	}
	if Reason(cause) != 0 {
		t.Errorf("reason of a plain error: %v", Reason(cause))
	}
}

// failingCommit is a store whose metadata cannot be written.
type failingCommit struct{ Store }

var errCommit = errors.New("metadata bucket unavailable")

func (failingCommit) Commit(context.Context, *Metadata) error { return errCommit }

// TestCoordinatorStorageFailure: a checkpoint whose metadata cannot be
// written fails with storage_failure, its cause kept in the message.
func TestCoordinatorStorageFailure(t *testing.T) {
	store := failingCommit{NewDirStore(t.TempDir())}
	c, _ := runCoordinator(t, Config{Interval: time.Hour, Timeout: time.Minute, Store: store, Tasks: []string{"a[0]"}},
		func(c *Coordinator, b Barrier) { c.Ack(b.ID, "a[0]", nil, 0, 0) })
	id, err := c.Savepoint(false)
	if err != nil {
		t.Fatal(err)
	}
	s := waitStatus(t, c.cfg.History, id)
	if s.Status != StatusFailed || s.FailureReason != ReasonStorageFailure ||
		s.Failure != "checkpoint 1: storage_failure: write metadata: metadata bucket unavailable" {
		t.Fatalf("savepoint: %+v", s)
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(data, &fields); err != nil || fields["failure_reason"] != "storage_failure" {
		t.Fatalf("stats as JSON: %s, %v", data, err)
	}
}

// TestCoordinatorShutdownReasons: when the run ends, the checkpoint in
// progress and the savepoints queued behind it fail with job_stopped, and a
// savepoint requested afterwards is refused with job_not_running.
func TestCoordinatorShutdownReasons(t *testing.T) {
	h := NewHistory()
	triggered := make(chan Barrier, 1)
	tasks := &scriptedTasks{answer: func(b Barrier) { triggered <- b }}
	c := NewCoordinator(Config{Job: "job", Timeout: time.Minute, Store: NewDirStore(t.TempDir()), Tasks: []string{"a[0]"}, History: h}, tasks)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	first, err := c.Savepoint(false)
	if err != nil {
		t.Fatal(err)
	}
	if b := <-triggered; b.ID != first {
		t.Fatalf("triggered %+v, want savepoint %d", b, first)
	}
	queued, err := c.Savepoint(true)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	for _, id := range []int64{first, queued} {
		s, ok := h.Get(id)
		if !ok || s.Status != StatusFailed || s.FailureReason != ReasonJobStopped ||
			s.Failure != fmt.Sprintf("checkpoint %d: job_stopped: the job stopped before it completed", id) {
			t.Errorf("savepoint %d: %+v", id, s)
		}
	}
	_, err = c.Savepoint(false)
	if Reason(err) != ReasonJobNotRunning || err.Error() != "job job: savepoint: job_not_running: the job is not running" {
		t.Fatalf("savepoint after the run: %v", err)
	}
}
