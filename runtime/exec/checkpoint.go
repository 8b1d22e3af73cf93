package exec

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/runtime/spec"
)

// ErrNoCheckpoints: the job takes no checkpoints, so it has no savepoints
// either.
var ErrNoCheckpoints = errors.New("the job takes no checkpoints (its spec has no checkpoint block)")

// Checkpoints is a job's checkpointing across its runs: the spec, the
// store, the history, and the coordinator of the run in progress. Its mutex
// is taken after job.mu when both are held, and is never held while calling
// the coordinator.
type Checkpoints struct {
	cfg   *spec.Checkpoint
	Store checkpoint.Store
	// History outlives runs: a restarted job keeps its checkpoints'
	// History and ids.
	History *checkpoint.History
	// From is the savepoint the job was submitted From, used until the
	// job has a checkpoint of its own.
	From             *SavepointRef
	AllowNonRestored bool

	mu       sync.Mutex
	coord    *checkpoint.Coordinator
	nextID   int64
	restored *RestoreInfo
}

// ErrNotRunning: the job has no run in progress to take a savepoint of.
var ErrNotRunning = errors.New("job is not running")

// Savepoint queues a savepoint of job with the current run's coordinator
// and returns its id and figures so far; with stop, the job ends once it
// completes.
func (c *Checkpoints) Savepoint(job string, stop bool) (int64, checkpoint.Stats, error) {
	coord := c.Coordinator()
	if coord == nil {
		return 0, checkpoint.Stats{}, fmt.Errorf("job %s: savepoint: %w", job, ErrNotRunning)
	}
	id, err := coord.Savepoint(stop)
	if err != nil {
		return 0, checkpoint.Stats{}, fmt.Errorf("%w: %w", ErrNotRunning, err)
	}
	st, _ := c.History.Get(id)
	return id, st, nil
}

// SavepointRef names a savepoint: the job that took it and its id, written
// "<job>-<id>".
type SavepointRef struct {
	Job string
	ID  int64
}

func (s SavepointRef) String() string { return s.Job + "-" + strconv.FormatInt(s.ID, 10) }

// ParseSavepointRef reads a savepoint id of the API.
func ParseSavepointRef(s string) (SavepointRef, error) {
	i := strings.LastIndexByte(s, '-')
	if i <= 0 {
		return SavepointRef{}, fmt.Errorf("savepoint id %q: want <job>-<number>", s)
	}
	id, err := strconv.ParseInt(s[i+1:], 10, 64)
	if err != nil || id < 1 {
		return SavepointRef{}, fmt.Errorf("savepoint id %q: want <job>-<number>", s)
	}
	return SavepointRef{Job: s[:i], ID: id}, nil
}

// RestoreInfo says where a run of the job started from.
type RestoreInfo struct {
	// Checkpoint is the id of the checkpoint or savepoint restored.
	Checkpoint int64           `json:"checkpoint"`
	Kind       checkpoint.Kind `json:"kind"`
	// Job is the job that took it (another one for a savepoint).
	Job      string        `json:"job"`
	At       time.Time     `json:"at"`
	Duration time.Duration `json:"duration_ns"`
}

// CheckpointInfo summarises a job's checkpoints for GET /v1/jobs/{id}.
type CheckpointInfo struct {
	Mode      string            `json:"mode"`
	Completed int64             `json:"completed"`
	Failed    int64             `json:"failed"`
	Latest    *checkpoint.Stats `json:"latest,omitempty"`
	Restored  *RestoreInfo      `json:"restored,omitempty"`
}

// Coordinator is the current run's Coordinator, or nil between runs.
func (c *Checkpoints) Coordinator() *checkpoint.Coordinator {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.coord
}

// Info summarises the job's checkpoints.
func (c *Checkpoints) Info() *CheckpointInfo {
	done, failed := c.History.Counts()
	out := &CheckpointInfo{Mode: c.cfg.Mode, Completed: done, Failed: failed}
	all := c.History.All()
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Status == checkpoint.StatusCompleted {
			s := all[i]
			out.Latest = &s
			break
		}
	}
	c.mu.Lock()
	if c.restored != nil {
		r := *c.restored
		out.Restored = &r
	}
	c.mu.Unlock()
	return out
}

// latest finds what a run of job id restores from: its newest checkpoint or
// savepoint, else the savepoint it was submitted from; nil for none.
func (c *Checkpoints) latest(ctx context.Context, job string) (*RestoreSet, error) {
	m, err := checkpoint.Latest(ctx, c.Store, job)
	switch {
	case err == nil:
		return &RestoreSet{store: c.Store, meta: m}, nil
	case !errors.Is(err, checkpoint.ErrNotFound):
		return nil, fmt.Errorf("job %s: find the latest checkpoint: %w", job, err)
	case c.From == nil:
		return nil, nil
	}
	m, err = FindCheckpoint(ctx, c.Store, c.From.Job, c.From.ID)
	if err != nil {
		return nil, fmt.Errorf("job %s: savepoint %s: %w", job, c.From, err)
	}
	return &RestoreSet{store: c.Store, meta: m, allowNonRestored: c.AllowNonRestored}, nil
}

// FindCheckpoint reads the metadata of one checkpoint or savepoint.
func FindCheckpoint(ctx context.Context, s checkpoint.Store, job string, id int64) (*checkpoint.Metadata, error) {
	all, err := s.List(ctx, job)
	if err != nil {
		return nil, err
	}
	for _, m := range all {
		if m.ID == id {
			return m, nil
		}
	}
	return nil, fmt.Errorf("job %s checkpoint %d: %w", job, id, checkpoint.ErrNotFound)
}

// NewCheckpoints is a job's checkpointing by cfg into store, starting
// from savepoint from when it is not nil.
func NewCheckpoints(cfg *spec.Checkpoint, store checkpoint.Store, from *SavepointRef, allowNonRestored bool) *Checkpoints {
	return &Checkpoints{cfg: cfg, Store: store, History: checkpoint.NewHistory(), From: from, AllowNonRestored: allowNonRestored}
}

// restoredFrom records the restore a run started with.
func (c *Checkpoints) restoredFrom(r *RestoreSet, took time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.restored = &RestoreInfo{Checkpoint: r.meta.ID, Kind: r.meta.Kind, Job: r.meta.Job, At: time.Now().UTC(), Duration: took}
}
