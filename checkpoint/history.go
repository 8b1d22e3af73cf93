package checkpoint

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Status is where a checkpoint is in its life.
type Status string

// Statuses of a checkpoint.
const (
	StatusInProgress Status = "IN_PROGRESS"
	StatusCompleted  Status = "COMPLETED"
	StatusFailed     Status = "FAILED"
)

// Stats describe one checkpoint or savepoint for the API.
type Stats struct {
	ID        int64     `json:"id"`
	Kind      Kind      `json:"kind"`
	Status    Status    `json:"status"`
	Triggered time.Time `json:"triggered"`
	// Duration is from the trigger to the metadata being written (or to
	// the failure).
	Duration time.Duration `json:"duration_ns"`
	// Size is the bytes stored.
	Size int64 `json:"size"`
	// Alignment is the longest time a task spent aligning barriers.
	Alignment time.Duration `json:"alignment_ns"`
	// InFlight is the bytes of in-flight data stored (unaligned
	// checkpoints: records that were in the exchange), part of Size.
	InFlight int64 `json:"in_flight_bytes"`
	// Failure says in words why a FAILED checkpoint failed; FailureReason
	// is the same as a stable name to branch on.
	Failure       string        `json:"failure,omitempty"`
	FailureReason FailureReason `json:"failure_reason,omitempty"`
	// Stop: a savepoint that stops the job.
	Stop bool `json:"stop,omitempty"`
}

// failed marks s failed after d because of err.
func (s *Stats) failed(d time.Duration, err *FailureError) {
	s.Status, s.Duration, s.Failure, s.FailureReason = StatusFailed, d, err.Error(), err.Reason
}

// historyLen bounds the checkpoints a History remembers; savepoints are
// remembered beyond it.
const historyLen = 100

// History keeps a job's recent checkpoints and every savepoint it took, across
// restarts of the job within the process. Safe for concurrent use.
type History struct {
	mu        sync.Mutex
	entries   []*Stats
	waiters   map[int64][]chan Stats
	completed int64
	failed    int64
}

// NewHistory makes an empty history.
func NewHistory() *History { return &History{waiters: map[int64][]chan Stats{}} }

// begin records a triggered checkpoint.
func (h *History) begin(s Stats) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.Status = StatusInProgress
	h.entries = append(h.entries, &s)
	checkpoints := 0
	for _, e := range h.entries {
		if e.Kind == KindCheckpoint {
			checkpoints++
		}
	}
	for i := 0; checkpoints > historyLen && i < len(h.entries); {
		if h.entries[i].Kind == KindCheckpoint && h.entries[i].Status != StatusInProgress {
			h.entries = append(h.entries[:i], h.entries[i+1:]...)
			checkpoints--
			continue
		}
		i++
	}
}

// end records how checkpoint id ended and wakes its waiters.
func (h *History) end(id int64, update func(*Stats)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.entries {
		if e.ID != id {
			continue
		}
		update(e)
		if e.Status == StatusCompleted {
			h.completed++
		} else {
			h.failed++
		}
		for _, w := range h.waiters[id] {
			w <- *e
		}
		delete(h.waiters, id)
		return
	}
}

// All returns every remembered checkpoint and savepoint, oldest first.
func (h *History) All() []Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Stats, len(h.entries))
	for i, e := range h.entries {
		out[i] = *e
	}
	return out
}

// Counts are the checkpoints completed and failed so far.
func (h *History) Counts() (completed, failed int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.completed, h.failed
}

// Get returns one remembered checkpoint.
func (h *History) Get(id int64) (Stats, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.entries {
		if e.ID == id {
			return *e, true
		}
	}
	return Stats{}, false
}

// Wait blocks until checkpoint id has ended, or ctx is done.
func (h *History) Wait(ctx context.Context, id int64) (Stats, error) {
	h.mu.Lock()
	var found *Stats
	for _, e := range h.entries {
		if e.ID == id {
			found = e
		}
	}
	if found == nil {
		h.mu.Unlock()
		return Stats{}, fmt.Errorf("checkpoint %d: %w", id, ErrNotFound)
	}
	if found.Status != StatusInProgress {
		s := *found
		h.mu.Unlock()
		return s, nil
	}
	w := make(chan Stats, 1)
	h.waiters[id] = append(h.waiters[id], w)
	h.mu.Unlock()
	select {
	case s := <-w:
		return s, nil
	case <-ctx.Done():
		return Stats{}, ctx.Err()
	}
}
