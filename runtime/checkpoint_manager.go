package runtime

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/exec"
	"wasmstream.io/platform/runtime/plan"
)

// ErrNoSuchSavepoint: from_savepoint names no savepoint; ErrNoSuchCheckpoint:
// from_checkpoint names no retained checkpoint or savepoint.
var (
	ErrNoSuchSavepoint  = errors.New("no such savepoint")
	ErrNoSuchCheckpoint = errors.New("no such checkpoint (GET /v1/jobs/{id}/checkpoints lists a job's, its retained ones are restorable)")
)

// prepareCheckpoints sets up a job's checkpointing, checking the savepoint
// (or, given as from_checkpoint, the retained checkpoint) it starts from.
func (m *Manager) prepareCheckpoints(ctx context.Context, p *plan.Plan, from string, allowNonRestored bool) (*exec.Checkpoints, error) {
	from, field, anyKind := restoreSource(from) // rescale.go
	var ref *exec.SavepointRef
	if from != "" {
		r, err := exec.ParseSavepointRef(from)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalidJob, field, err)
		}
		ref = &r
	}
	cp, err := m.newCheckpoints(p, ref, allowNonRestored)
	if err != nil || ref == nil {
		return cp, err
	}
	meta, err := exec.FindCheckpoint(ctx, m.checkpoints, ref.Job, ref.ID)
	if errors.Is(err, checkpoint.ErrCorrupt) {
		return nil, fmt.Errorf("%w: %s: %s: %w", ErrInvalidJob, field, from, err)
	}
	if err != nil && anyKind {
		return nil, fmt.Errorf("%w: %s: %s: %w", ErrInvalidJob, field, from, ErrNoSuchCheckpoint)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %s: %w", ErrInvalidJob, field, from, ErrNoSuchSavepoint)
	}
	if meta.Kind != checkpoint.KindSavepoint && !anyKind {
		return nil, fmt.Errorf("%w: %s: %s is a checkpoint, not a savepoint (from_checkpoint restores it)", ErrInvalidJob, field, from)
	}
	if err := m.checkLineage(ref); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidJob, field, err)
	}
	if err := exec.NewRestoreSet(m.checkpoints, meta, allowNonRestored).Check(p); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidJob, field, err)
	}
	return cp, nil
}

// checkpointWarnings says what the streams a job writes imply: streams
// that can drop what it writes (streamWarnings), and for an exactly-once
// job a duplicate window shorter than a recovery can take, which makes
// recovery read the sink's (or dead letters') subject back to fence
// interrupted commits.
func (m *Manager) checkpointWarnings(ctx context.Context, p *plan.Plan) []string {
	streams := m.streamWarnings(ctx, p) // validate_streams.go
	c := p.Job.Checkpoint
	if c == nil || c.Mode != plan.ModeExactlyOnce || m.cfg.JetStream == nil {
		return streams
	}
	bound := exec.NewRestartPolicy(p.Job.Restart).LongestDelay()
	var out []string
	check := func(path, subject string) {
		stream, window, err := connector.DuplicateWindow(ctx, m.cfg.JetStream, subject)
		if err != nil {
			return
		}
		if need := bound + time.Minute; window < need {
			out = append(out, fmt.Sprintf("%s: stream %s de-duplicates over %s, less than a recovery may take (restart delay up to %s plus a minute to restore): "+
				"a commit interrupted by a failure and replayed after the window is fenced by reading the subject %q back since the commit began, "+
				"so output stays exactly once but such a recovery is slower; raise the stream's duplicate_window to avoid it",
				path, stream, window, bound, subject))
		}
	}
	for i, s := range p.Job.Sinks {
		switch {
		case s.JetStream != nil:
			check(fmt.Sprintf("sinks[%d]", i), s.JetStream.Subject)
		case s.KV != nil:
			check(fmt.Sprintf("sinks[%d]", i), connector.KVFilter(s.KV.Bucket, ""))
		}
	}
	// Dead letters are committed like a sink's output (exec's txDeadLetters).
	if p.Job.DeadLetter != "" {
		check("dead_letter_subject", p.Job.DeadLetter)
	}
	return append(out, streams...)
}

// SubmitJobFromSavepoint starts a job restoring a savepoint: state is matched
// to operators by id and to states by name; allowNonRestored drops state of
// operators the job no longer has. Key groups are redistributed when
// parallelism changed.
func (m *Manager) SubmitJobFromSavepoint(ctx context.Context, data []byte, savepoint string, allowNonRestored bool) (JobInfo, error) {
	return m.submit(ctx, data, savepoint, allowNonRestored)
}

// Checkpoints returns a job's checkpoint history, newest last.
func (m *Manager) Checkpoints(_ context.Context, id string) ([]checkpoint.Stats, error) {
	cp, err := m.jobCheckpoints(id)
	if err != nil {
		return nil, err
	}
	return cp.History.All(), nil
}

// SavepointInfo is a savepoint for the API: its id is what from_savepoint
// takes.
type SavepointInfo struct {
	ID string `json:"id"`
	checkpoint.Stats
}

// TriggerSavepoint starts a savepoint of a running job and returns its id at
// once; Savepoints tells when it is done.
func (m *Manager) TriggerSavepoint(_ context.Context, id string) (SavepointInfo, error) {
	cp, err := m.jobCheckpoints(id)
	if err != nil {
		return SavepointInfo{}, err
	}
	return savepoint(cp, id, false)
}

// Savepoints lists a job's savepoints: those taken in this process, then
// those only the store still has. A job that is not running in this process
// (it ended before the platform started, or it was deleted with its
// savepoints kept) has those of the store.
func (m *Manager) Savepoints(ctx context.Context, id string) ([]SavepointInfo, error) {
	cp, err := m.jobCheckpoints(id)
	if errors.Is(err, ErrNotFound) && m.checkpoints != nil {
		return m.storedSavepoints(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	stored, err := cp.Store.List(ctx, id)
	if err != nil && !errors.Is(err, checkpoint.ErrCorrupt) {
		return nil, err
	}
	kept := map[int64]bool{}
	for _, md := range stored {
		kept[md.ID] = true
	}
	var out []SavepointInfo
	seen := map[int64]bool{}
	for _, s := range cp.History.All() {
		// A completed savepoint the store no longer has was deleted.
		if s.Kind == checkpoint.KindSavepoint && (s.Status != checkpoint.StatusCompleted || kept[s.ID]) {
			out = append(out, SavepointInfo{ID: exec.SavepointRef{Job: id, ID: s.ID}.String(), Stats: s})
			seen[s.ID] = true
		}
	}
	for _, md := range stored {
		if md.Kind == checkpoint.KindSavepoint && !seen[md.ID] {
			out = append(out, storedSavepoint(md))
		}
	}
	return out, nil
}

// storedSavepoints lists the savepoints the store has of a job this process
// does not run: ErrNotFound when the job is unknown and has none.
func (m *Manager) storedSavepoints(ctx context.Context, id string) ([]SavepointInfo, error) {
	stored, err := m.checkpoints.List(ctx, id)
	if err != nil {
		return nil, err
	}
	var out []SavepointInfo
	for _, md := range stored {
		if md.Kind == checkpoint.KindSavepoint {
			out = append(out, storedSavepoint(md))
		}
	}
	m.mu.Lock()
	_, past := m.past[id]
	m.mu.Unlock()
	if len(out) == 0 && !past {
		return nil, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	return out, nil
}

func storedSavepoint(md *checkpoint.Metadata) SavepointInfo {
	return SavepointInfo{ID: exec.SavepointRef{Job: md.Job, ID: md.ID}.String(), Stats: checkpoint.Stats{
		ID: md.ID, Kind: md.Kind, Status: checkpoint.StatusCompleted, Triggered: md.Created, Duration: md.Duration, Size: md.Size(),
	}}
}

// DeleteSavepoint disposes of a savepoint of job (an id Savepoints lists),
// also one of a job that was deleted with its savepoints kept. A savepoint
// a job that has not ended may restore is refused (ErrSavepointInUse): the
// one it was submitted from, or its own newest snapshot, which a restart
// restores.
func (m *Manager) DeleteSavepoint(ctx context.Context, job, savepoint string) error {
	if m.checkpoints == nil {
		return fmt.Errorf("job %s: %w", job, exec.ErrNoCheckpoints)
	}
	ref, err := exec.ParseSavepointRef(savepoint)
	if err != nil || ref.Job != job {
		return fmt.Errorf("savepoint %s of job %s: %w", savepoint, job, ErrNotFound)
	}
	md, err := exec.FindCheckpoint(ctx, m.checkpoints, job, ref.ID)
	if errors.Is(err, checkpoint.ErrNotFound) || err == nil && md.Kind != checkpoint.KindSavepoint {
		return fmt.Errorf("savepoint %s: %w", savepoint, ErrNotFound)
	}
	if err != nil {
		return err
	}
	m.mu.Lock()
	var users []string
	owner := m.jobs[job]
	for _, j := range m.jobs {
		if j.state().Terminal() || j.x.Checkpoints == nil {
			continue
		}
		if from := j.x.Checkpoints.From; from != nil && *from == ref {
			users = append(users, j.id)
		}
	}
	m.mu.Unlock()
	if len(users) > 0 {
		sort.Strings(users)
		return fmt.Errorf("savepoint %s: jobs %s started from it and have not ended: %w", savepoint, strings.Join(users, ", "), ErrSavepointInUse)
	}
	if owner != nil && !owner.state().Terminal() {
		latest, err := checkpoint.Latest(ctx, m.checkpoints, job)
		if err == nil && latest.ID == ref.ID {
			return fmt.Errorf("savepoint %s: the newest snapshot of job %s, which restores it after a failure; take a newer checkpoint or end the job first: %w", savepoint, job, ErrSavepointInUse)
		}
	}
	if err := m.checkpoints.Delete(ctx, job, ref.ID); err != nil {
		return err
	}
	m.log.Info("savepoint deleted", "job", job, "savepoint", savepoint)
	return nil
}

// StopJob triggers a savepoint that stops the job: sources emit nothing
// after its barrier, and once it completes the sinks commit and the job ends
// FINISHED. It returns at once; if the savepoint fails the job goes on.
func (m *Manager) StopJob(_ context.Context, id string) (SavepointInfo, error) {
	cp, err := m.jobCheckpoints(id)
	if err != nil {
		return SavepointInfo{}, err
	}
	sp, err := savepoint(cp, id, true)
	if err == nil {
		if j, ok := m.job(id); ok {
			j.mu.Lock()
			j.stopping = &sp
			j.mu.Unlock()
		}
	}
	return sp, err
}

// stoppedWith is the savepoint that stopped the job: the one StopJob
// triggered, once it completed.
func (j *job) stoppedWith() (SavepointInfo, bool) {
	j.mu.Lock()
	sp := j.stopping
	j.mu.Unlock()
	if sp == nil || j.x.Checkpoints == nil {
		return SavepointInfo{}, false
	}
	st, ok := j.x.Checkpoints.History.Get(sp.Stats.ID)
	return *sp, ok && st.Status == checkpoint.StatusCompleted
}

// jobCheckpoints finds a running job's checkpointing.
func (m *Manager) jobCheckpoints(id string) (*exec.Checkpoints, error) {
	j, ok := m.job(id)
	if !ok {
		return nil, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	if j.x.Checkpoints == nil {
		return nil, fmt.Errorf("job %s: %w", id, exec.ErrNoCheckpoints)
	}
	return j.x.Checkpoints, nil
}

// ErrNotRunning: the job has no run in progress to take a savepoint of.
var ErrNotRunning = exec.ErrNotRunning

// savepoint queues a savepoint of job with its current run's coordinator.
func savepoint(c *exec.Checkpoints, job string, stop bool) (SavepointInfo, error) {
	id, st, err := c.Savepoint(job, stop)
	if err != nil {
		return SavepointInfo{}, err
	}
	return SavepointInfo{ID: exec.SavepointRef{Job: job, ID: id}.String(), Stats: st}, nil
}

// newCheckpoints sets up checkpointing for a job whose spec asks for it.
func (m *Manager) newCheckpoints(p *plan.Plan, from *exec.SavepointRef, allowNonRestored bool) (*exec.Checkpoints, error) {
	cfg := p.Job.Checkpoint
	if cfg == nil {
		if from != nil {
			return nil, fmt.Errorf("%w: from_savepoint: %w", ErrInvalidJob, exec.ErrNoCheckpoints)
		}
		return nil, nil
	}
	if m.checkpoints == nil {
		return nil, fmt.Errorf("%w: checkpoint: the platform has no checkpoint storage (no data directory)", ErrInvalidJob)
	}
	cp := exec.NewCheckpoints(cfg, m.checkpoints, from, allowNonRestored)
	cp.Log = m.log
	return cp, nil
}
