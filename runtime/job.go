package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"wasmstream.io/platform/cluster"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/exec"
	"wasmstream.io/platform/runtime/plan"
)

// job is one submitted job: its plan, its state and its running tasks.
type job struct {
	id      string
	spec    []byte
	modules []string
	// refs are the spec's module references and the ids they resolved to.
	refs    []JobModule
	created time.Time
	log     *slog.Logger
	mgr     *Manager
	// x is the job as its subtasks run it: plan, counters and
	// checkpointing, fixed at creation.
	x *exec.Job
	// pressure reports each vertex's backpressured ratio.
	pressure *exec.PressureSampler

	mu        sync.Mutex
	st        JobState
	failure   string
	ended     time.Time
	cancelRun context.CancelFunc
	cancelled bool
	// suspended: the platform is shutting down; the registry keeps the job
	// as running so that the next start resumes it.
	suspended bool
	// ends fixes each bounded source's end, by source id and filter.
	ends map[string]map[string]uint64
	// tasks are the job's tasks once built; the metrics read them.
	tasks []*exec.Task
	// restarts counts the restarts after failures (restart.go).
	restarts int64
	// warnings are what submission noticed (checkpointWarnings).
	warnings []string
	// stopping is the savepoint that is to stop the job (StopJob), if any.
	stopping *SavepointInfo
	// moved: in cluster mode, another worker took the job's lease over.
	moved bool
	// from is the savepoint or checkpoint the job was submitted from.
	from string
	// versions is the job's version history (versions.go), empty until
	// its first upgrade or rescale; switching is its switch to the next
	// version, and probation is set while the version it runs may still
	// be rolled back (upgrade_switch.go).
	versions  []VersionInfo
	switching *pendingSwitch
	probation *probation
	// canary is the canary the job runs on part of its key space, if any
	// (upgrade_canary.go); spec and refs are the version that runs on the
	// rest.
	canary *canaryVersion

	// lease is the job's lease in cluster mode (set before start), and
	// regRev the revision of its registry record this worker last wrote;
	// persistMu makes the record's writes one at a time.
	lease     *cluster.Lease
	persistMu sync.Mutex
	regRev    uint64
	// fences are the sink subtasks' fencing tokens under lease, by key.
	fenceMu sync.Mutex
	fences  map[string]*connector.Fence
	// assignment is the placement of the job's current run, in cluster
	// mode (cluster_spread.go).
	assignment *cluster.Assignment

	done chan struct{}
}

func newJob(id string, spec []byte, p *plan.Plan, m *Manager) *job {
	j := &job{
		id: id, spec: spec, modules: p.ModuleIDs(), created: time.Now().UTC(),
		log: m.log.With("job", id, "job_name", p.Job.Name), mgr: m,
		st: StateCreated, done: make(chan struct{}),
	}
	j.x = &exec.Job{ID: id, Plan: p, Log: j.log, Env: m.env, Counters: map[string][]*exec.Counters{}, BoundedEnd: j.boundedEnd, Observer: j}
	for _, v := range p.Vertices {
		cs := make([]*exec.Counters, v.Parallelism)
		for i := range cs {
			cs[i] = exec.NewCounters()
		}
		j.x.Counters[v.ID] = cs
	}
	j.pressure = exec.NewPressureSampler()
	j.x.Pressure = j.pressure
	return j
}

func (j *job) state() JobState {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.st
}

// setState moves the job to s and records it in the registry.
func (j *job) setState(s JobState, failure string) {
	j.mu.Lock()
	j.st = s
	if failure != "" {
		j.failure = failure
	}
	if s.Terminal() {
		j.ended = time.Now().UTC()
	}
	rec := j.recordLocked()
	j.mu.Unlock()
	j.persist(rec)
}

// recordLocked is the job's registry record; j.mu is held.
func (j *job) recordLocked() *jobRecord {
	rec := j.runningLocked()
	rec.Created, rec.State, rec.Failure, rec.Ends, rec.Versions, rec.Restarts = j.created, j.st, j.failure, j.ends, j.versions, j.restarts
	if pr := j.probation; pr != nil && !pr.passed {
		// Until the new version commits, a restart runs the one before.
		rec.Spec, rec.Modules, rec.Canary = pr.previousSpec, pr.previousRefs, pr.previousCanary
	}
	if !j.ended.IsZero() {
		ended := j.ended
		rec.Ended = &ended
	}
	return rec
}

// runningLocked is the version of the job that runs now, as a record
// prepareRecord builds it from: the record without its history, and with
// the version on probation where the registry keeps the one before.
func (j *job) runningLocked() *jobRecord {
	rec := &jobRecord{ID: j.id, Name: j.x.Plan.Job.Name, Spec: j.spec, Modules: j.refs, Canary: j.canary}
	if cp := j.x.Checkpoints; cp != nil && cp.From != nil {
		rec.FromSavepoint, rec.AllowNonRestored = j.from, cp.AllowNonRestored
	}
	return rec
}

// persist writes a record to the registry, if the platform has one. A
// failure is logged (and returned): the job keeps running, and only
// resuming it after a restart is at stake.
func (j *job) persist(rec *jobRecord) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := j.persistCtx(ctx, rec)
	if err != nil {
		j.log.Warn("job registry write failed", "error", err)
	}
	return err
}

// persistCtx writes a record to the registry, if the platform has one.
func (j *job) persistCtx(ctx context.Context, rec *jobRecord) error {
	if j.mgr.registry == nil {
		return nil
	}
	if j.lease == nil {
		return j.mgr.registry.put(ctx, rec)
	}
	// In cluster mode only the lease holder writes the record, with
	// compare-and-set, so a worker whose lease moved cannot overwrite the
	// new owner's.
	j.persistMu.Lock()
	defer j.persistMu.Unlock()
	select {
	case <-j.lease.Lost():
		return fmt.Errorf("job %s: %w", j.id, cluster.ErrLost)
	default:
	}
	rev, err := j.mgr.registry.update(ctx, rec, j.regRev)
	if err != nil {
		return err
	}
	j.regRev = rev
	return nil
}

// boundedEnd returns the end of a bounded source, computing it with compute
// the first time and keeping it with the job.
func (j *job) boundedEnd(source string, compute func() (map[string]uint64, error)) (map[string]uint64, error) {
	j.mu.Lock()
	end, ok := j.ends[source]
	j.mu.Unlock()
	if ok {
		return end, nil
	}
	end, err := compute()
	if err != nil {
		return nil, err
	}
	j.mu.Lock()
	if j.ends == nil {
		j.ends = map[string]map[string]uint64{}
	}
	j.ends[source] = end
	j.mu.Unlock()
	return end, nil
}

// start runs the job in its supervising goroutine.
func (j *job) start() {
	ctx, cancel := context.WithCancel(context.Background())
	j.mu.Lock()
	j.cancelRun = cancel
	if j.cancelled {
		// Cancelled before it started (a version switched to as the
		// platform shut down): it stops at once.
		cancel()
	}
	j.mu.Unlock()
	go j.supervise(ctx, cancel)
}

// supervise runs the job, restarting it after failures as its restart
// strategy allows (restart.go), and records the outcome.
func (j *job) supervise(ctx context.Context, cancel context.CancelFunc) {
	defer close(j.done)
	defer cancel()
	j.finish(j.x.RunWithRestarts(ctx))
}

// Running implements Observer: the job is RUNNING with these tasks, whose
// backpressure is sampled until the run ends.
func (j *job) Running(tasks []*exec.Task) (done func()) {
	j.setTasks(tasks)
	j.markRunning()
	j.log.Info("job running", "tasks", len(tasks))
	return j.pressure.Start(tasks)
}

// Restarting implements Observer.
func (j *job) Restarting(attempt int, delay time.Duration, err error) {
	j.restartDuringSwitch(err) // upgrade_switch.go
	j.mu.Lock()
	j.restarts++
	j.mu.Unlock()
	j.setState(StateRestarting, err.Error())
	j.log.Warn("job restarting", "attempt", attempt, "delay", delay, "error", err)
}

// markRunning moves a created or restarting job to RUNNING; a job cancelled
// while it was being built stays CANCELLING.
func (j *job) markRunning() {
	j.mu.Lock()
	if j.st != StateCreated && j.st != StateRestarting {
		j.mu.Unlock()
		return
	}
	j.st = StateRunning
	rec := j.recordLocked()
	j.mu.Unlock()
	j.persist(rec)
}

// finish records how the job ended: suspended for a shutdown, canceled,
// failed or finished.
func (j *job) finish(err error) {
	if j.switchOver(err) { // upgrade_switch.go
		return
	}
	j.mu.Lock()
	cancelled, suspended, moved := j.cancelled, j.suspended, j.moved
	j.mu.Unlock()
	if j.lease != nil && !moved {
		// Released once the record says how the job ended (or that it
		// still runs, when the worker shuts down): the next owner starts
		// from there.
		defer j.mgr.release(j.lease)
	}
	switch {
	case moved:
		j.mu.Lock()
		j.st = StateCanceled
		j.mu.Unlock()
		j.log.Info("job stopped: it runs on another worker now")
	case suspended:
		j.mu.Lock()
		j.st = StateCanceled
		j.mu.Unlock()
		if j.lease != nil {
			j.log.Info("job handed over for shutdown")
		} else {
			j.log.Info("job suspended for shutdown")
		}
	case cancelled:
		j.setState(StateCanceled, "")
		j.log.Info("job canceled")
	case err != nil:
		j.setState(StateFailing, err.Error())
		j.setState(StateFailed, "")
		j.log.Error("job failed", "error", err)
	default:
		j.setState(StateFinished, "")
		if sp, ok := j.stoppedWith(); ok {
			j.log.Info("job stopped with a savepoint", "savepoint", sp.ID)
		} else {
			j.log.Info("job finished")
		}
	}
}

// cancel stops the job and waits until its tasks have stopped. With
// suspend, the platform is shutting down and the job stays running in the
// registry, to be resumed.
func (j *job) cancel(ctx context.Context, suspend bool) error {
	j.mu.Lock()
	if j.st.Terminal() {
		j.mu.Unlock()
		return ErrFinished
	}
	j.cancelled, j.suspended = true, suspend
	j.st = StateCancelling
	cancelRun := j.cancelRun
	j.mu.Unlock()
	if cancelRun != nil {
		cancelRun()
	}
	wait, stop := context.WithTimeout(ctx, exec.ShutdownGrace)
	defer stop()
	select {
	case <-j.done:
		return nil
	case <-wait.Done():
		return errors.New("job did not stop in time")
	}
}

// info snapshots the job for the API.
func (j *job) info() JobInfo {
	j.mu.Lock()
	info := JobInfo{ID: j.id, Name: j.x.Plan.Job.Name, State: j.st, Created: j.created, Failure: j.failure, Modules: j.refs, Restarts: j.restarts, Warnings: j.warnings, Versions: j.versionsLocked()}
	if j.mgr.cluster != nil {
		info.Worker = j.mgr.cluster.member.ID()
	}
	if !j.ended.IsZero() {
		ended := j.ended
		info.Ended = &ended
	}
	assignment, cv := j.assignment, j.canary
	j.mu.Unlock()
	info.Canary = j.canaryInfo(cv) // upgrade_canary.go
	info.Exceptions = j.x.Exceptions.List()
	if j.x.Checkpoints != nil {
		info.Checkpoint = j.x.Checkpoints.Info()
	}
	for _, v := range j.x.Plan.Vertices {
		vi := VertexInfo{ID: v.ID, Kind: v.Kind, Parallelism: v.Parallelism, Task: j.taskName(v)}
		for _, c := range j.x.Counters[v.ID] {
			vi.RecordsIn += c.In.Load()
			vi.RecordsOut += c.Out.Load()
			vi.UDFErrors += c.UDFErrors.Load()
			vi.Skipped += c.Skipped.Load()
			vi.DeadLettered += c.DeadLettered.Load()
			vi.LateRecords += c.Late.Load()
		}
		vi.Watermark = exec.VertexWatermark(j.x.Counters[v.ID])
		vi.Backpressure = j.pressure.Ratio(j.taskName(v))
		vi.Workers = subtaskWorkers(assignment, j.taskName(v), v.Parallelism)
		info.Vertices = append(info.Vertices, vi)
		info.Edges = append(info.Edges, edgeInfos(v)...)
	}
	return info
}

// taskName names the task a vertex runs in: its chain's head.
func (j *job) taskName(v *plan.Vertex) string {
	for len(v.In) == 1 && v.In[0].Chained() {
		v = v.In[0].From
	}
	return v.ID
}
