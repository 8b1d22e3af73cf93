package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

var errLeaseMoved = errors.New("the job's lease has moved")

// fakeFence refuses the triggers and completions of the ids it is given and
// records what it was asked.
type fakeFence struct {
	refuseTrigger, refuseComplete []int64

	mu        sync.Mutex
	triggered []int64
	completed []int64
}

func (f *fakeFence) Trigger(_ context.Context, id int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.triggered = append(f.triggered, id)
	if slices.Contains(f.refuseTrigger, id) {
		return errLeaseMoved
	}
	return nil
}

func (f *fakeFence) Complete(_ context.Context, id int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.completed = append(f.completed, id)
	if slices.Contains(f.refuseComplete, id) {
		return errLeaseMoved
	}
	return nil
}

// TestCoordinatorFence: a checkpoint or savepoint whose trigger the fence
// refuses fails as fenced without a barrier, and its id is not taken again;
// one whose completion it refuses fails as fenced, the tasks are told it
// was abandoned and it is deleted from the store. Without a fence every
// checkpoint completes. Checkpoints 1 to 3 are periodic, 4 and 5 savepoints.
func TestCoordinatorFence(t *testing.T) {
	const last = 5
	for _, tt := range []struct {
		name string
		// fence is nil for none.
		fence *fakeFence
	}{
		{name: "no fence"},
		{name: "fence lets all through", fence: &fakeFence{}},
		{name: "refused triggers", fence: &fakeFence{refuseTrigger: []int64{2, 4}}},
		{name: "refused completions", fence: &fakeFence{refuseComplete: []int64{2, 5}}},
		{name: "zombie", fence: &fakeFence{refuseTrigger: []int64{1, 4}, refuseComplete: []int64{2, 3, 5}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			store := NewDirStore(t.TempDir())
			cfg := Config{Interval: time.Hour, Timeout: time.Minute, Retain: last, Store: store, Tasks: []string{"a[0]"}}
			var refuseTrigger, refuseComplete []int64
			if tt.fence != nil {
				cfg.Fence = tt.fence
				refuseTrigger, refuseComplete = tt.fence.refuseTrigger, tt.fence.refuseComplete
			}
			var (
				mu       sync.Mutex
				barriers []int64
			)
			c, tasks := runCoordinator(t, cfg, func(c *Coordinator, b Barrier) {
				mu.Lock()
				barriers = append(barriers, b.ID)
				mu.Unlock()
				ref, err := c.cfg.Store.PutBlob(ctx, "job", b.ID, "positions~a~0", []byte(`{}`))
				if err != nil {
					c.Decline(b.ID, "a[0]", ReasonStorageFailure, err)
					return
				}
				c.Ack(b.ID, "a[0]", map[string]Blob{ref.Name: ref}, 0, 0)
			})
			h := c.cfg.History
			for id := int64(1); id <= last; id++ {
				kind := KindCheckpoint
				if id <= 3 {
					c.Request()
				} else {
					kind = KindSavepoint
					sp, err := c.Savepoint(false)
					if err != nil || sp != id {
						t.Fatalf("savepoint %d, %v; want id %d", sp, err, id)
					}
				}
				// A savepoint's waiter gets its failure from the history.
				s := waitStatus(t, h, id)
				var want string
				switch {
				case slices.Contains(refuseTrigger, id):
					want = fmt.Sprintf("checkpoint %d: fenced: record the trigger: the job's lease has moved", id)
				case slices.Contains(refuseComplete, id):
					want = fmt.Sprintf("checkpoint %d: fenced: record the completion: the job's lease has moved", id)
				}
				switch {
				case s.Kind != kind:
					t.Errorf("checkpoint %d: kind %s, want %s", id, s.Kind, kind)
				case want == "" && s.Status != StatusCompleted:
					t.Errorf("checkpoint %d: %+v, want it completed", id, s)
				case want != "" && (s.Status != StatusFailed || s.FailureReason != ReasonFenced || s.Failure != want):
					t.Errorf("checkpoint %d: %+v, want it failed with %q", id, s, want)
				}
			}

			var wantBarriers, wantCompleted, wantAsked []int64
			for id := int64(1); id <= last; id++ {
				if slices.Contains(refuseTrigger, id) {
					continue
				}
				wantBarriers = append(wantBarriers, id)
				wantAsked = append(wantAsked, id)
				if !slices.Contains(refuseComplete, id) {
					wantCompleted = append(wantCompleted, id)
				}
			}
			if tt.fence == nil {
				wantAsked = nil
			}
			mu.Lock()
			gotBarriers := slices.Clone(barriers)
			mu.Unlock()
			if !slices.Equal(gotBarriers, wantBarriers) {
				t.Errorf("barriers sent for %v, want %v", gotBarriers, wantBarriers)
			}
			// The history ends a checkpoint just before the tasks are told.
			var notified, failed []int64
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
				tasks.mu.Lock()
				notified, failed = slices.Clone(tasks.notified), slices.Clone(tasks.failed)
				tasks.mu.Unlock()
				if len(notified)+len(failed) >= len(wantBarriers) || time.Now().After(deadline) {
					break
				}
			}
			if !slices.Equal(notified, wantCompleted) || !slices.Equal(failed, refuseComplete) {
				t.Errorf("tasks told %v completed and %v abandoned, want %v and %v", notified, failed, wantCompleted, refuseComplete)
			}
			if tt.fence != nil {
				tt.fence.mu.Lock()
				triggered, completed := slices.Clone(tt.fence.triggered), slices.Clone(tt.fence.completed)
				tt.fence.mu.Unlock()
				if want := []int64{1, 2, 3, 4, 5}; !slices.Equal(triggered, want) || !slices.Equal(completed, wantAsked) {
					t.Errorf("fence asked to trigger %v and complete %v, want %v and %v", triggered, completed, want, wantAsked)
				}
			}

			all, err := store.List(ctx, "job")
			if err != nil {
				t.Fatal(err)
			}
			var stored []int64
			for _, m := range all {
				stored = append(stored, m.ID)
			}
			if !slices.Equal(stored, wantCompleted) {
				t.Errorf("store lists %v, want %v", stored, wantCompleted)
			}
			for _, id := range refuseComplete {
				ref := blobRef("positions~a~0", []byte(`{}`))
				if _, err := store.GetBlob(ctx, "job", id, ref); !errors.Is(err, ErrCorrupt) {
					t.Errorf("blob of checkpoint %d after a refused completion: %v, want it missing", id, err)
				}
			}
		})
	}
}

// blockingFence holds every trigger until its context ends.
type blockingFence struct{ asked chan int64 }

func (f blockingFence) Trigger(ctx context.Context, id int64) error {
	f.asked <- id
	<-ctx.Done()
	return ctx.Err()
}

func (blockingFence) Complete(context.Context, int64) error { return nil }

// TestCoordinatorFenceStopped: a fence that gives up because the run ended
// fails the savepoint with job_stopped, not fenced.
func TestCoordinatorFenceStopped(t *testing.T) {
	h := NewHistory()
	fence := blockingFence{asked: make(chan int64, 1)}
	tasks := &scriptedTasks{answer: func(b Barrier) { t.Errorf("barrier %d sent", b.ID) }}
	c := NewCoordinator(Config{Job: "job", Timeout: time.Minute, Store: NewDirStore(t.TempDir()), Tasks: []string{"a[0]"}, History: h, Fence: fence}, tasks)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	id, err := c.Savepoint(false)
	if err != nil {
		t.Fatal(err)
	}
	if asked := <-fence.asked; asked != id {
		t.Fatalf("fence asked about %d, want %d", asked, id)
	}
	cancel()
	<-done
	s, ok := h.Get(id)
	want := fmt.Sprintf("checkpoint %d: job_stopped: the job stopped before it completed: record the trigger: context canceled", id)
	if !ok || s.Status != StatusFailed || s.FailureReason != ReasonJobStopped || s.Failure != want {
		t.Fatalf("savepoint %d: %+v, want it failed with %q", id, s, want)
	}
}
