package checkpoint

import (
	"context"
	"sync"
	"testing"
	"time"
)

// scriptedTasks answers triggers as the test says, each on its own
// goroutine, and records the notifications. The test waits for the answers
// before its temporary store is removed.
type scriptedTasks struct {
	c       *Coordinator
	answer  func(b Barrier)
	answers sync.WaitGroup

	mu       sync.Mutex
	notified []int64
	failed   []int64
}

func (s *scriptedTasks) Trigger(b Barrier) { s.answers.Go(func() { s.answer(b) }) }

func (s *scriptedTasks) Notify(id int64, completed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if completed {
		s.notified = append(s.notified, id)
	} else {
		s.failed = append(s.failed, id)
	}
}

func runCoordinator(t *testing.T, cfg Config, answer func(c *Coordinator, b Barrier)) (*Coordinator, *scriptedTasks) {
	t.Helper()
	if cfg.Store == nil {
		cfg.Store = NewDirStore(t.TempDir())
	}
	cfg.Job, cfg.History = "job", NewHistory()
	tasks := &scriptedTasks{}
	c := NewCoordinator(cfg, tasks)
	tasks.c = c
	tasks.answer = func(b Barrier) { answer(c, b) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; tasks.answers.Wait() })
	return c, tasks
}

func waitStatus(t *testing.T, h *History, id int64) Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		if _, ok := h.Get(id); ok {
			break
		}
		time.Sleep(time.Millisecond)
	}
	s, err := h.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCoordinatorCompletesWithFinishedTasks: a checkpoint completes once
// every task acknowledged it or has finished; the finished task's final
// blobs are stored with it and it is listed as finished.
func TestCoordinatorCompletesWithFinishedTasks(t *testing.T) {
	store := NewDirStore(t.TempDir())
	c, tasks := runCoordinator(t, Config{Interval: 10 * time.Millisecond, Timeout: time.Minute, Retain: 2, Store: store, Tasks: []string{"a[0]", "b[0]"}},
		func(c *Coordinator, b Barrier) {
			ref, _ := c.cfg.Store.PutBlob(context.Background(), "job", b.ID, "positions~a~0", []byte(`{}`))
			c.Ack(b.ID, "a[0]", map[string]Blob{ref.Name: ref}, time.Millisecond, 0)
		})
	c.Finished("b[0]", map[string][]byte{"positions~b~0": []byte(`{"x":7}`)})
	for id := int64(1); id <= 4; id++ {
		if s := waitStatus(t, c.cfg.History, id); s.Status != StatusCompleted {
			t.Fatalf("checkpoint %d: %+v", id, s)
		}
	}
	m, err := Latest(context.Background(), store, "job")
	if err != nil {
		t.Fatal(err)
	}
	data, err := store.GetBlob(context.Background(), "job", m.ID, m.Blobs["positions~b~0"])
	if err != nil || string(data) != `{"x":7}` || len(m.Finished) != 1 || m.Finished[0] != "b[0]" {
		t.Fatalf("latest %+v: %q %v", m, data, err)
	}
	all, err := store.List(context.Background(), "job")
	if err != nil || len(all) > 3 {
		t.Fatalf("retained %d checkpoints, %v", len(all), err)
	}
	// The history tells waiters a checkpoint completed just before the
	// coordinator notifies the tasks.
	deadline := time.Now().Add(10 * time.Second)
	for {
		tasks.mu.Lock()
		notified, failed := len(tasks.notified), len(tasks.failed)
		tasks.mu.Unlock()
		if notified >= 4 && failed == 0 {
			return
		}
		if failed != 0 || time.Now().After(deadline) {
			t.Fatalf("%d notified, %d failed", notified, failed)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestCoordinatorFailsDeclinedAndLateCheckpoints: a declined checkpoint and
// one not acknowledged in time fail, and the next one starts after them.
func TestCoordinatorFailsDeclinedAndLateCheckpoints(t *testing.T) {
	c, tasks := runCoordinator(t, Config{Interval: 10 * time.Millisecond, Timeout: 50 * time.Millisecond, Tasks: []string{"a[0]"}},
		func(c *Coordinator, b Barrier) {
			switch b.ID {
			case 1:
				c.Decline(b.ID, "a[0]", ReasonTaskFailure, context.Canceled)
			case 2:
			default:
				c.Ack(b.ID, "a[0]", nil, 0, 0)
			}
		})
	h := c.cfg.History
	if s := waitStatus(t, h, 1); s.Status != StatusFailed || s.FailureReason != ReasonTaskFailure ||
		s.Failure != "checkpoint 1: task_failure (declined by task a[0]): context canceled" {
		t.Fatalf("checkpoint 1: %+v", s)
	}
	if s := waitStatus(t, h, 2); s.Status != StatusFailed || s.FailureReason != ReasonExpired ||
		s.Failure != "checkpoint 2: expired: not complete after the timeout of 50ms" {
		t.Fatalf("checkpoint 2: %+v", s)
	}
	if s := waitStatus(t, h, 3); s.Status != StatusCompleted {
		t.Fatalf("checkpoint 3: %+v", s)
	}
	sp, err := c.Savepoint(false)
	if err != nil {
		t.Fatal(err)
	}
	if s := waitStatus(t, h, sp); s.Status != StatusCompleted || s.Kind != KindSavepoint {
		t.Fatalf("savepoint: %+v", s)
	}
	tasks.mu.Lock()
	defer tasks.mu.Unlock()
	if len(tasks.failed) != 2 || tasks.failed[0] != 1 || tasks.failed[1] != 2 {
		t.Fatalf("failed %v", tasks.failed)
	}
}
