package runtime

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/cluster"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/exec"
	"wasmstream.io/platform/runtime/plan"
)

// Config wires a Manager to the platform's parts.
type Config struct {
	// DataDir holds uploaded modules, and the Pebble state backend's
	// databases under state/.
	DataDir string
	// Budgets bound the memory of the jobs' subtasks; zero fields take
	// their defaults.
	Budgets exec.Budgets
	// Host compiles and runs modules.
	Host *host.Host
	// JetStream serves JetStream sources, sinks and dead letters.
	JetStream jetstream.JetStream
	// Checkpoints stores checkpoints and savepoints; nil keeps them in
	// DataDir/checkpoints (without DataDir, jobs cannot take checkpoints).
	Checkpoints checkpoint.Store
	// SharedModules is cluster mode for modules: the modules are kept in
	// the JetStream object store bucket PLATFORM_MODULES (one object per
	// module, named by its id) and their names in the KV bucket
	// PLATFORM_MODULE_NAMES (one key per name, its versions as JSON), so
	// that every worker on the same JetStream sees the same modules;
	// DataDir/modules is then a cache of the modules this worker has
	// used. It needs JetStream. False keeps modules and names in DataDir
	// only, for this process alone.
	SharedModules bool
	// JobRetention is how long ended jobs are kept: one that ended longer
	// ago is removed from the registry with its checkpoints (its
	// savepoints are kept). 0 keeps ended jobs until they are deleted.
	JobRetention time.Duration
	// Cluster, when set, makes this manager one worker of a cluster on
	// JetStream (which it needs): it registers itself, runs the jobs whose
	// leases it holds, and takes over the jobs of workers that die
	// (cluster.go). Unset, it is the one process of the platform and
	// resumes every unfinished job of the registry at start.
	Cluster *cluster.Config
	Logger  *slog.Logger
}

// Manager keeps the uploaded modules and runs jobs. Its methods are what the
// HTTP API calls.
type Manager struct {
	cfg Config
	log *slog.Logger

	// registry persists jobs when the platform has JetStream.
	registry *registry
	// cluster is set in cluster mode.
	cluster *clusterState
	// shared keeps modules and names in JetStream (Config.SharedModules).
	shared *sharedModules
	// checkpoints stores checkpoints and savepoints.
	checkpoints checkpoint.Store

	// env is what every job's subtasks use of the platform.
	env *exec.Env

	mu      sync.Mutex
	modules map[string]*moduleEntry
	// names are the module names and their versions, kept in
	// data_dir/modules/names.json.
	names map[string]*moduleName
	jobs  map[string]*job
	// past are jobs that ended before this process started.
	past   map[string]*jobRecord
	closed bool

	// stopSweep ends the retention sweeper; swept is closed when it has.
	stopSweep chan struct{}
	swept     chan struct{}
}

// NewManager loads the modules stored under cfg.DataDir.
func NewManager(ctx context.Context, cfg Config) (*Manager, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	m := &Manager{cfg: cfg, log: cfg.Logger, modules: map[string]*moduleEntry{}, names: map[string]*moduleName{}, jobs: map[string]*job{}, past: map[string]*jobRecord{}}
	m.env = &exec.Env{JetStream: cfg.JetStream, DataDir: cfg.DataDir, Budgets: cfg.Budgets.WithDefaults(), Module: m.hostModule}
	if cfg.JetStream != nil && cfg.JetStream.Conn() != nil {
		m.env.NATS = connector.NewLink(cfg.JetStream.Conn())
	}
	m.checkpoints = cfg.Checkpoints
	if m.checkpoints == nil && cfg.DataDir != "" {
		m.checkpoints = checkpoint.NewDirStore(filepath.Join(cfg.DataDir, "checkpoints"))
	}
	if cfg.SharedModules {
		if err := m.openSharedModules(ctx); err != nil { // modules_shared.go
			return nil, err
		}
	} else if err := m.loadModules(ctx); err != nil {
		return nil, err
	}
	if cfg.JetStream != nil {
		reg, err := openRegistry(ctx, cfg.JetStream, m.replicas())
		if err != nil {
			return nil, err
		}
		m.registry = reg
		if cfg.Cluster != nil {
			if err := m.joinCluster(ctx, *cfg.Cluster); err != nil {
				return nil, err
			}
		} else if err := m.resume(ctx); err != nil {
			return nil, err
		}
	}
	if cfg.Cluster != nil && cfg.JetStream == nil {
		return nil, errors.New("cluster mode needs JetStream")
	}
	if cfg.JobRetention > 0 {
		m.startSweeper(cfg.JobRetention)
	}
	return m, nil
}

// replicas is how many copies the platform's buckets have: cluster mode's
// setting, or 1.
func (m *Manager) replicas() int {
	if m.cfg.Cluster == nil {
		return 1
	}
	return max(1, m.cfg.Cluster.Replicas)
}

// resume restarts the jobs the registry says were running when the platform
// stopped, and keeps the others as history.
func (m *Manager) resume(ctx context.Context) error {
	recs, err := m.registry.all(ctx)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if rec.State.Terminal() {
			m.past[rec.ID] = rec
			continue
		}
		if err := m.resumeVersions(ctx, rec); err != nil { // versions.go
			return err
		}
		j, err := m.prepareRecord(ctx, rec) // upgrade_canary.go
		if err != nil {
			now := time.Now().UTC()
			rec.State, rec.Failure, rec.Ended = StateFailed, "resuming after restart: "+err.Error(), &now
			m.past[rec.ID] = rec
			if perr := m.registry.put(ctx, rec); perr != nil {
				return perr
			}
			m.log.Error("job not resumed", "job", rec.ID, "error", err)
			continue
		}
		j.created, j.ends, j.versions, j.restarts = rec.Created, rec.Ends, rec.Versions, rec.Restarts
		m.jobs[j.id] = j
		j.start()
		m.log.Info("job resumed", "job", j.id, "job_name", rec.Name)
	}
	return nil
}

// prepare parses and checks a job spec and makes the job, not yet started;
// from names the savepoint it starts from, if any, and pinned are the
// module references a resumed job resolved at its submission.
func (m *Manager) prepare(ctx context.Context, id string, data []byte, from string, allowNonRestored bool, pinned []JobModule) (*job, error) {
	p, cp, refs, err := m.check(ctx, data, from, allowNonRestored, pinned) // validate.go
	if err != nil {
		return nil, err
	}
	j := newJob(id, data, p, m)
	j.refs, j.from = refs, from
	j.x.Checkpoints = cp
	j.warnings = m.checkpointWarnings(ctx, p)
	return j, nil
}

// SubmitJob parses a job spec (JSON or YAML), checks it against the uploaded
// modules and starts it.
func (m *Manager) SubmitJob(ctx context.Context, data []byte) (JobInfo, error) {
	return m.submit(ctx, data, "", false)
}

// submit starts a job, from a savepoint when from is set.
func (m *Manager) submit(ctx context.Context, data []byte, from string, allowNonRestored bool) (JobInfo, error) {
	j, err := m.prepare(ctx, newJobID(), data, from, allowNonRestored, nil)
	if err != nil {
		return JobInfo{}, err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return JobInfo{}, fmt.Errorf("platform is shutting down")
	}
	m.jobs[j.id] = j
	m.mu.Unlock()
	j.mu.Lock()
	rec := j.recordLocked()
	j.mu.Unlock()
	if err := m.register(ctx, j, rec); err != nil {
		m.mu.Lock()
		delete(m.jobs, j.id)
		m.mu.Unlock()
		return JobInfo{}, err
	}
	j.start()
	return j.info(), nil
}

// register records a new job in the registry; in cluster mode it first
// takes the job's lease, so that no other worker runs it.
func (m *Manager) register(ctx context.Context, j *job, rec *jobRecord) error {
	if m.registry == nil {
		return nil
	}
	if m.cluster == nil {
		return m.registry.put(ctx, rec)
	}
	lease, err := m.cluster.member.Acquire(ctx, j.id)
	if err != nil {
		return err
	}
	rev, err := m.registry.update(ctx, rec, 0)
	if err != nil {
		m.release(lease)
		return err
	}
	j.own(lease, rev)
	return nil
}

// checkConnectors makes sure the job's JetStream parts can work before it
// starts: JetStream is reachable and the source streams exist.
func (m *Manager) checkConnectors(ctx context.Context, p *plan.Plan) error {
	for i, s := range p.Job.Sources {
		if s.JetStream == nil {
			continue
		}
		if m.cfg.JetStream == nil {
			return fmt.Errorf("%w: sources[%d].jetstream: no NATS connection", ErrInvalidJob, i)
		}
		if _, err := m.cfg.JetStream.Stream(ctx, s.JetStream.Stream); err != nil {
			return missingStream(fmt.Sprintf("sources[%d].jetstream.stream", i), s.JetStream.Stream, s.JetStream.Subjects, err)
		}
	}
	for i, s := range p.Job.Sinks {
		if s.JetStream == nil {
			continue
		}
		if m.cfg.JetStream == nil {
			return fmt.Errorf("%w: sinks[%d].jetstream: no NATS connection", ErrInvalidJob, i)
		}
		if _, err := m.cfg.JetStream.StreamNameBySubject(ctx, s.JetStream.Subject); err != nil {
			return noStreamFor(fmt.Sprintf("sinks[%d].jetstream.subject", i), s.JetStream.Subject, err)
		}
	}
	if p.Job.DeadLetter != "" {
		if m.cfg.JetStream == nil {
			return fmt.Errorf("%w: dead_letter_subject: no NATS connection", ErrInvalidJob)
		}
		if _, err := m.cfg.JetStream.StreamNameBySubject(ctx, p.Job.DeadLetter); err != nil {
			return noStreamFor("dead_letter_subject", p.Job.DeadLetter, err)
		}
	}
	return nil
}

func newJobID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ListJobs lists the jobs by creation time.
func (m *Manager) ListJobs(context.Context) ([]JobInfo, error) {
	m.mu.Lock()
	jobs := make([]*job, 0, len(m.jobs))
	for _, j := range m.jobs {
		jobs = append(jobs, j)
	}
	m.mu.Unlock()
	sort.Slice(jobs, func(a, b int) bool {
		if !jobs[a].created.Equal(jobs[b].created) {
			return jobs[a].created.Before(jobs[b].created)
		}
		return jobs[a].id < jobs[b].id
	})
	m.mu.Lock()
	out := make([]JobInfo, 0, len(m.past)+len(jobs))
	for _, rec := range m.past {
		out = append(out, rec.info())
	}
	m.mu.Unlock()
	if m.cluster != nil {
		for _, rec := range m.remoteRecords() {
			out = append(out, m.remoteInfo(rec))
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Created.Before(out[b].Created) })
	for _, j := range jobs {
		out = append(out, j.info())
	}
	return out, nil
}

// GetJob returns one job's state and vertices.
func (m *Manager) GetJob(_ context.Context, id string) (JobInfo, error) {
	j, ok := m.job(id)
	if ok {
		return j.info(), nil
	}
	m.mu.Lock()
	rec, ok := m.past[id]
	m.mu.Unlock()
	if ok {
		return rec.info(), nil
	}
	if rec, ok := m.remoteRecord(id); ok {
		return m.remoteInfo(rec), nil
	}
	return JobInfo{}, fmt.Errorf("job %s: %w", id, ErrNotFound)
}

// JobSpec returns the spec a job was submitted with, byte for byte, and its
// media type: application/json for a JSON spec (one whose first non-space
// byte is '{', as the platform reads it), application/yaml otherwise.
func (m *Manager) JobSpec(_ context.Context, id string) ([]byte, string, error) {
	m.mu.Lock()
	var data []byte
	if j, ok := m.jobs[id]; ok {
		data = j.spec
	} else if rec, ok := m.past[id]; ok {
		data = rec.Spec
	} else if rec, ok := m.remoteRecord(id); ok {
		data = rec.Spec
	} else {
		m.mu.Unlock()
		return nil, "", fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	m.mu.Unlock()
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return data, "application/json", nil
	}
	return data, "application/yaml", nil
}

// DeleteJob removes a job that has ended from the registry, with its
// checkpoints; its savepoints are kept unless savepoints is set. A job
// that has not ended is refused (ErrNotEnded).
func (m *Manager) DeleteJob(ctx context.Context, id string, savepoints bool) error {
	m.mu.Lock()
	j, live := m.jobs[id]
	_, past := m.past[id]
	m.mu.Unlock()
	remote, isRemote := m.remoteRecord(id)
	switch {
	case !live && !past && !isRemote:
		return fmt.Errorf("job %s: %w", id, ErrNotFound)
	case live && !j.state().Terminal():
		return fmt.Errorf("job %s is %s; cancel or stop it first: %w", id, j.state(), ErrNotEnded)
	case !live && !past && !remote.State.Terminal():
		return fmt.Errorf("job %s is %s; cancel or stop it first: %w", id, remote.State, ErrNotEnded)
	}
	if live {
		// The job's state is terminal once its run has returned; its
		// supervisor closes done right after.
		select {
		case <-j.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if m.registry != nil {
		if err := m.registry.delete(ctx, id); err != nil {
			return err
		}
	}
	if m.cluster != nil {
		if err := m.cluster.member.Remove(ctx, id); err != nil {
			return err
		}
	}
	m.mu.Lock()
	delete(m.jobs, id)
	delete(m.past, id)
	m.mu.Unlock()
	if err := m.deleteSnapshots(ctx, id, savepoints); err != nil {
		return fmt.Errorf("job %s deleted, but not all its checkpoints: %w", id, err)
	}
	m.log.Info("job deleted", "job", id, "savepoints", savepoints)
	return nil
}

// deleteSnapshots deletes a job's stored checkpoints, and its savepoints
// too when savepoints is set.
func (m *Manager) deleteSnapshots(ctx context.Context, id string, savepoints bool) error {
	if m.checkpoints == nil {
		return nil
	}
	stored, err := m.checkpoints.List(ctx, id)
	if err != nil {
		return err
	}
	for _, md := range stored {
		if md.Kind == checkpoint.KindSavepoint && !savepoints {
			continue
		}
		if err := m.checkpoints.Delete(ctx, id, md.ID); err != nil {
			return err
		}
	}
	return nil
}

// sweepInterval is how often the retention sweeper looks for ended jobs
// to remove: a tenth of the retention, between a second and an hour.
func sweepInterval(retention time.Duration) time.Duration {
	return min(max(retention/10, time.Second), time.Hour)
}

// startSweeper removes ended jobs older than retention now and then every
// sweepInterval, until Close.
func (m *Manager) startSweeper(retention time.Duration) {
	m.stopSweep, m.swept = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(m.swept)
		t := time.NewTicker(sweepInterval(retention))
		defer t.Stop()
		for {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			m.sweep(ctx, time.Now(), retention)
			cancel()
			select {
			case <-m.stopSweep:
				return
			case <-t.C:
			}
		}
	}()
}

// sweep removes the jobs that ended before now minus retention, with their
// checkpoints, keeping their savepoints. It returns the ids it removed.
func (m *Manager) sweep(ctx context.Context, now time.Time, retention time.Duration) []string {
	cutoff := now.Add(-retention)
	var old []string
	m.mu.Lock()
	for id, j := range m.jobs {
		j.mu.Lock()
		if j.st.Terminal() && !j.suspended && !j.ended.IsZero() && j.ended.Before(cutoff) {
			old = append(old, id)
		}
		j.mu.Unlock()
	}
	for id, rec := range m.past {
		if rec.Ended != nil && rec.Ended.Before(cutoff) {
			old = append(old, id)
		}
	}
	m.mu.Unlock()
	if m.cluster != nil && m.cluster.member.Housekeeper() {
		// Jobs that ended on workers gone since are in the registry
		// only; one worker sweeps them.
		for _, rec := range m.remoteRecords() {
			if rec.State.Terminal() && rec.Ended != nil && rec.Ended.Before(cutoff) {
				old = append(old, rec.ID)
			}
		}
	}
	sort.Strings(old)
	var removed []string
	for _, id := range old {
		if err := m.DeleteJob(ctx, id, false); err != nil {
			m.log.Warn("retention: ended job not removed", "job", id, "error", err)
			continue
		}
		removed = append(removed, id)
	}
	if len(removed) > 0 {
		m.log.Info("retention: removed ended jobs", "jobs", removed, "retention", retention)
	}
	return removed
}

// CancelJob cancels a job and waits for its tasks to stop.
func (m *Manager) CancelJob(ctx context.Context, id string) (JobInfo, error) {
	j, ok := m.job(id)
	if !ok {
		return JobInfo{}, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	if err := j.cancel(ctx, false); err != nil {
		return j.info(), err
	}
	return j.info(), nil
}

// WaitJob blocks until the job reaches a terminal state or ctx is done,
// following the job through its versions (upgrade_switch.go).
func (m *Manager) WaitJob(ctx context.Context, id string) (JobInfo, error) {
	j, ok := m.job(id)
	if !ok {
		return JobInfo{}, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	for {
		select {
		case <-j.done:
			next, ok := m.job(id)
			if !ok || next == j {
				return j.info(), nil
			}
			j = next
		case <-ctx.Done():
			return j.info(), ctx.Err()
		}
	}
}

func (m *Manager) job(id string) (*job, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[id]
	return j, ok
}

// Close stops every running job and waits for them, up to ctx. The registry
// keeps them as running, so that the next start on the same data resumes
// them; in cluster mode their leases are released and the other workers
// take them over.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	alreadyClosed := m.closed
	m.closed = true
	jobs := make([]*job, 0, len(m.jobs))
	for _, j := range m.jobs {
		jobs = append(jobs, j)
	}
	m.mu.Unlock()
	if m.stopSweep != nil && !alreadyClosed {
		close(m.stopSweep)
		<-m.swept
	}
	for _, j := range jobs {
		if err := j.cancel(ctx, true); err != nil && err != ErrFinished {
			return err
		}
	}
	if m.cluster != nil && !alreadyClosed {
		// Each job's lease was released as it stopped (job.finish), so
		// the other workers take the jobs over at once.
		for _, j := range jobs {
			<-j.done
		}
		return m.leaveCluster(ctx)
	}
	return nil
}
