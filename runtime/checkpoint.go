package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/runtime/spec"
)

// ErrNoCheckpoints: the job takes no checkpoints, so it has no savepoints
// either.
var ErrNoCheckpoints = errors.New("the job takes no checkpoints (its spec has no checkpoint block)")

// jobCheckpoints is a job's checkpointing across its runs: the spec, the
// store, the history, and the coordinator of the run in progress. Its mutex
// is taken after job.mu when both are held, and is never held while calling
// the coordinator.
type jobCheckpoints struct {
	cfg   *spec.Checkpoint
	store checkpoint.Store
	// history outlives runs: a restarted job keeps its checkpoints'
	// history and ids.
	history *checkpoint.History
	// from is the savepoint the job was submitted from, used until the
	// job has a checkpoint of its own.
	from          *savepointRef
	allowNonRestd bool

	mu       sync.Mutex
	coord    *checkpoint.Coordinator
	nextID   int64
	restored *RestoreInfo
}

// savepointRef names a savepoint: the job that took it and its id, written
// "<job>-<id>".
type savepointRef struct {
	job string
	id  int64
}

func (s savepointRef) String() string { return s.job + "-" + strconv.FormatInt(s.id, 10) }

// parseSavepointRef reads a savepoint id of the API.
func parseSavepointRef(s string) (savepointRef, error) {
	i := strings.LastIndexByte(s, '-')
	if i <= 0 {
		return savepointRef{}, fmt.Errorf("savepoint id %q: want <job>-<number>", s)
	}
	id, err := strconv.ParseInt(s[i+1:], 10, 64)
	if err != nil || id < 1 {
		return savepointRef{}, fmt.Errorf("savepoint id %q: want <job>-<number>", s)
	}
	return savepointRef{job: s[:i], id: id}, nil
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

// coordinator is the current run's coordinator, or nil between runs.
func (c *jobCheckpoints) coordinator() *checkpoint.Coordinator {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.coord
}

// info summarises the job's checkpoints.
func (c *jobCheckpoints) info() *CheckpointInfo {
	done, failed := c.history.Counts()
	out := &CheckpointInfo{Mode: c.cfg.Mode, Completed: done, Failed: failed}
	all := c.history.All()
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
func (c *jobCheckpoints) latest(ctx context.Context, job string) (*restoreSet, error) {
	m, err := checkpoint.Latest(ctx, c.store, job)
	switch {
	case err == nil:
		return &restoreSet{store: c.store, meta: m}, nil
	case !errors.Is(err, checkpoint.ErrNotFound):
		return nil, fmt.Errorf("job %s: find the latest checkpoint: %w", job, err)
	case c.from == nil:
		return nil, nil
	}
	m, err = findCheckpoint(ctx, c.store, c.from.job, c.from.id)
	if err != nil {
		return nil, fmt.Errorf("job %s: savepoint %s: %w", job, c.from, err)
	}
	return &restoreSet{store: c.store, meta: m, allowNonRestored: c.allowNonRestd}, nil
}

// findCheckpoint reads the metadata of one checkpoint or savepoint.
func findCheckpoint(ctx context.Context, s checkpoint.Store, job string, id int64) (*checkpoint.Metadata, error) {
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

// newCheckpoints sets up checkpointing for a job whose spec asks for it.
func (m *Manager) newCheckpoints(p *plan.Plan, from *savepointRef, allowNonRestored bool) (*jobCheckpoints, error) {
	cfg := p.Job.Checkpoint
	if cfg == nil {
		if from != nil {
			return nil, fmt.Errorf("%w: from_savepoint: %w", ErrInvalidJob, ErrNoCheckpoints)
		}
		return nil, nil
	}
	if m.checkpoints == nil {
		return nil, fmt.Errorf("%w: checkpoint: the platform has no checkpoint storage (no data directory)", ErrInvalidJob)
	}
	return &jobCheckpoints{cfg: cfg, store: m.checkpoints, history: checkpoint.NewHistory(), from: from, allowNonRestd: allowNonRestored}, nil
}

// restoredFrom records the restore a run started with.
func (c *jobCheckpoints) restoredFrom(r *restoreSet, took time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.restored = &RestoreInfo{Checkpoint: r.meta.ID, Kind: r.meta.Kind, Job: r.meta.Job, At: time.Now().UTC(), Duration: took}
}
