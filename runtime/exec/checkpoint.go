package exec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	// Log gets the warnings of checkpoints a restore passes over.
	Log *slog.Logger
	// Lineage, in cluster mode, fences the checkpoints of every run and
	// tells which stored ones are the job's own; nil when one process runs
	// the job.
	Lineage Lineage

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

// latest finds what a run of job id restores from: its newest usable
// checkpoint or savepoint, else the savepoint it was submitted from; nil
// for none. A checkpoint is usable when its metadata decodes and every blob
// matches its size and checksum and, for the kinds a restore decodes here,
// decodes (RestoreSet.usable). One that is not is logged as a warning with
// the reason and the next older one is tried; when none is usable the
// error is a *RestoreError, which fails the job. Ids of corrupt checkpoints
// are not taken again, so that a sink's message ids of output they may
// have committed are never reused. With a Lineage, the job's checkpoints
// that do not count in it are passed over silently (see own); the
// savepoint the job was submitted from is restored regardless.
func (c *Checkpoints) latest(ctx context.Context, job string) (*RestoreSet, error) {
	all, err := c.Store.List(ctx, job)
	var listed *checkpoint.ListError
	if err != nil && !errors.As(err, &listed) {
		return nil, fmt.Errorf("job %s: find the latest checkpoint: %w", job, err)
	}
	var corrupt []*checkpoint.CorruptError
	if listed != nil {
		corrupt = listed.Corrupt
	}
	all, corrupt = c.own(job, all, corrupt)
	var skipped []error
	for _, bad := range corrupt {
		c.skip(job, &checkpoint.Metadata{Job: job, ID: bad.ID}, bad)
		skipped = append(skipped, bad)
	}
	try := func(r *RestoreSet) (bool, error) {
		err := r.usable(ctx)
		if err == nil {
			if len(skipped) > 0 {
				// The job's own newer checkpoints were passed over,
				// also when this is the savepoint it was submitted
				// from: every epoch of the job is then newer.
				r.fellBack = true
				if r.meta.Job == job {
					r.skipAfter = r.meta.ID
				}
				c.log().Warn("restoring an older checkpoint: the exactly-once sinks drop the output the newer ones committed",
					"job", job, "checkpoint", r.meta.ID, "kind", r.meta.Kind, "from_job", r.meta.Job, "skipped", len(skipped))
			}
			return true, nil
		}
		if !errors.Is(err, checkpoint.ErrCorrupt) {
			return false, fmt.Errorf("job %s: read checkpoint %d: %w", job, r.meta.ID, err)
		}
		c.skip(job, r.meta, err)
		skipped = append(skipped, err)
		return false, nil
	}
	for i := len(all) - 1; i >= 0; i-- {
		r := &RestoreSet{store: c.Store, meta: all[i]}
		if ok, err := try(r); err != nil {
			return nil, err
		} else if ok {
			return r, nil
		}
	}
	// The savepoint the job was submitted from comes before its own
	// checkpoints.
	if c.From != nil {
		m, err := FindCheckpoint(ctx, c.Store, c.From.Job, c.From.ID)
		switch {
		case errors.Is(err, checkpoint.ErrCorrupt):
			c.log().Warn("savepoint not usable", "job", job, "savepoint", c.From.String(), "reason", err.Error())
			skipped = append(skipped, err)
		case err != nil:
			return nil, fmt.Errorf("job %s: savepoint %s: %w", job, c.From, err)
		default:
			r := &RestoreSet{store: c.Store, meta: m, allowNonRestored: c.AllowNonRestored}
			if ok, err := try(r); err != nil {
				return nil, err
			} else if ok {
				return r, nil
			}
		}
	}
	if len(skipped) == 0 {
		return nil, nil
	}
	newest := int64(0)
	if len(corrupt) > 0 {
		newest = corrupt[len(corrupt)-1].ID
	}
	if len(all) > 0 {
		newest = max(newest, all[len(all)-1].ID)
	}
	return nil, &RestoreError{Job: job, Checkpoint: newest,
		Err: fmt.Errorf("no checkpoint is usable: %w", joinedErrors(skipped))}
}

// joinedErrors are several errors in one line, separated by "; ".
type joinedErrors []error

func (e joinedErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (e joinedErrors) Unwrap() []error { return e }

// log is where the warnings of latest go.
func (c *Checkpoints) log() *slog.Logger {
	if c.Log == nil {
		return slog.Default()
	}
	return c.Log
}

// skip logs that checkpoint m cannot be restored by job and keeps its id
// from being taken again when it is the job's own.
func (c *Checkpoints) skip(job string, m *checkpoint.Metadata, reason error) {
	c.log().Warn("checkpoint not usable, trying an older one", "job", job, "checkpoint", m.ID, "from_job", m.Job, "reason", reason.Error())
	if m.Job != job {
		return
	}
	c.mu.Lock()
	c.nextID = max(c.nextID, m.ID+1)
	c.mu.Unlock()
}

// FindCheckpoint reads the metadata of one checkpoint or savepoint; one
// whose metadata is corrupt is its *checkpoint.CorruptError.
func FindCheckpoint(ctx context.Context, s checkpoint.Store, job string, id int64) (*checkpoint.Metadata, error) {
	all, err := s.List(ctx, job)
	var listed *checkpoint.ListError
	if err != nil && !errors.As(err, &listed) {
		return nil, err
	}
	for _, m := range all {
		if m.ID == id {
			return m, nil
		}
	}
	if listed != nil {
		for _, bad := range listed.Corrupt {
			if bad.ID == id {
				return nil, bad
			}
		}
	}
	return nil, fmt.Errorf("job %s checkpoint %d: %w", job, id, checkpoint.ErrNotFound)
}

// NewCheckpoints is a job's checkpointing by cfg into store, starting
// from savepoint from when it is not nil.
func NewCheckpoints(cfg *spec.Checkpoint, store checkpoint.Store, from *SavepointRef, allowNonRestored bool) *Checkpoints {
	return &Checkpoints{cfg: cfg, Store: store, History: checkpoint.NewHistory(), From: from, AllowNonRestored: allowNonRestored, Log: slog.Default()}
}

// restoredFrom records the restore a run started with.
func (c *Checkpoints) restoredFrom(r *RestoreSet, took time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.restored = &RestoreInfo{Checkpoint: r.meta.ID, Kind: r.meta.Kind, Job: r.meta.Job, At: time.Now().UTC(), Duration: took}
}
