package runtime

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"wasmstream.io/platform/cluster"
	"wasmstream.io/platform/connector"
)

// WorkerInfo is a worker of the cluster as the API lists it: its
// registration, whether it is alive, and the jobs whose leases it holds.
type WorkerInfo = cluster.WorkerInfo

// clusterState is what a manager in cluster mode keeps beside its jobs:
// its membership and a copy of the job registry kept current by a watch.
// records is guarded by mu, which is taken after Manager.mu when both are
// held, and before the Member's own lock (orphans asks the member while
// holding it); the Member never calls back.
type clusterState struct {
	member *cluster.Member

	mu      sync.Mutex
	records map[string]*jobRecord
	// expiredSince is when this worker, not the preferred one, first saw
	// a job's lease expired: it takes the job only if the preferred
	// worker has not within the timeout.
	expiredSince map[string]time.Time

	// parts are the jobs' subtasks this worker runs for their leaders
	// (cluster_spread.go); closing: it is leaving, and starts no more.
	parts   parts
	closing bool

	stop context.CancelFunc
	done chan struct{}
}

// joinCluster registers this worker, starts watching the registry and the
// loop that takes over the jobs whose leases expire.
func (m *Manager) joinCluster(ctx context.Context, cfg cluster.Config) error {
	member, err := cluster.Join(ctx, m.cfg.JetStream, cfg, m.load)
	if err != nil {
		return err
	}
	c := &clusterState{member: member, records: map[string]*jobRecord{}, expiredSince: map[string]time.Time{}, done: make(chan struct{}), parts: parts{jobs: map[string]*part{}}}
	// The member's heartbeat already calls load, which reads m.cluster
	// under m.mu.
	m.mu.Lock()
	m.cluster = c
	m.mu.Unlock()
	member.OnAssignment(m.sawAssignment)
	runCtx, stop := context.WithCancel(context.Background())
	c.stop = stop
	if err := m.registry.watch(runCtx, m.log, c.saw); err != nil {
		stop()
		_ = member.Leave(ctx)
		return err
	}
	go m.takeOverLoop(runCtx)
	return nil
}

func (c *clusterState) saw(id string, rec *jobRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rec == nil {
		delete(c.records, id)
		return
	}
	c.records[id] = rec
}

// load is what this worker runs: its jobs and the slots they take here (a
// job takes as many slots as its widest vertex has subtasks, as with
// Flink's slot sharing, split between the workers its run is placed on).
func (m *Manager) load() (jobs []string, used int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, j := range m.jobs {
		if j.state().Terminal() {
			continue
		}
		jobs = append(jobs, id)
		used += j.slotsHere()
	}
	sort.Strings(jobs)
	if m.cluster != nil {
		used += m.cluster.partSlots()
	}
	return jobs, used
}

// slots is the number of slots the job takes: its highest parallelism.
func (j *job) slots() int {
	n := 1
	for _, v := range j.x.Plan.Vertices {
		n = max(n, v.Parallelism)
	}
	return n
}

// slotsHere are the slots the job takes on this worker, its leader: all of
// them until its run is placed, then those its assignment placed here.
func (j *job) slotsHere() int {
	j.mu.Lock()
	a := j.assignment
	j.mu.Unlock()
	if a == nil {
		return j.slots()
	}
	return slotsOn(a, j.mgr.cluster.member.ID())
}

// takeOverLoop looks, every quarter of the timeout, for jobs that should
// run and whose lease has expired, and takes them over.
func (m *Manager) takeOverLoop(ctx context.Context) {
	c := m.cluster
	defer close(c.done)
	t := time.NewTicker(c.member.Timeout() / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, id := range m.orphans() {
			if ctx.Err() != nil {
				return
			}
			m.takeOver(ctx, id)
		}
	}
}

// orphans are the jobs that have not ended, do not run here, and whose
// lease this worker may take now.
func (m *Manager) orphans() []string {
	c := m.cluster
	c.mu.Lock()
	var ids []string
	for id, rec := range c.records {
		if !rec.State.Terminal() {
			ids = append(ids, id)
		}
	}
	c.mu.Unlock()
	sort.Strings(ids)
	var out []string
	now := time.Now()
	for _, id := range ids {
		if _, ok := m.job(id); ok {
			continue
		}
		st := c.member.Lease(id)
		c.mu.Lock()
		if !st.Expired {
			delete(c.expiredSince, id)
			c.mu.Unlock()
			continue
		}
		version := st.Version
		if version != "" && version != c.member.Self().Version {
			if c.member.HasLive(version) {
				// A worker of the job's own version takes it.
				c.mu.Unlock()
				continue
			}
			// None is left (the last was upgraded): a worker of this
			// version restores the job's checkpoint, as a new version
			// restores the old one's savepoints.
			version = c.member.Self().Version
		}
		if !c.member.Preferred(version) {
			first, ok := c.expiredSince[id]
			if !ok {
				c.expiredSince[id] = now
			}
			if !ok || now.Sub(first) < c.member.Timeout() {
				c.mu.Unlock()
				continue
			}
		}
		delete(c.expiredSince, id)
		c.mu.Unlock()
		out = append(out, id)
	}
	return out
}

// takeOver takes a job's expired lease and runs the job from its latest
// checkpoint.
func (m *Manager) takeOver(ctx context.Context, id string) {
	c := m.cluster
	lease, err := c.member.TakeOver(ctx, id)
	if err != nil {
		if !errors.Is(err, cluster.ErrHeld) {
			m.log.Warn("job not taken over", "job", id, "error", err)
		}
		return
	}
	// The record is read again under the lease: the copy the watch gave
	// may predate the end of the job.
	rec, rev, err := m.registry.get(ctx, id)
	if err != nil || rec.State.Terminal() {
		if err != nil && !errors.Is(err, ErrNotFound) {
			m.log.Warn("job not taken over", "job", id, "error", err)
		}
		m.release(lease)
		return
	}
	if err := m.runLeased(ctx, rec, rev, lease); err != nil {
		m.log.Error("job taken over but not started", "job", id, "error", err)
	}
}

// runLeased starts a job this worker holds the lease of, from its record.
func (m *Manager) runLeased(ctx context.Context, rec *jobRecord, rev uint64, lease *cluster.Lease) error {
	j, err := m.prepareRecord(ctx, rec) // upgrade_canary.go
	if err != nil {
		now := time.Now().UTC()
		rec.State, rec.Failure, rec.Ended = StateFailed, "taking over the job: "+err.Error(), &now
		if _, perr := m.registry.update(ctx, rec, rev); perr != nil {
			err = errors.Join(err, perr)
		}
		m.release(lease)
		return err
	}
	settleProbation(rec) // versions.go
	j.created, j.ends, j.versions, j.restarts = rec.Created, rec.Ends, rec.Versions, rec.Restarts
	j.own(lease, rev)
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		m.release(lease)
		return errors.New("platform is shutting down")
	}
	m.jobs[j.id] = j
	m.mu.Unlock()
	j.start()
	j.log.Info("job taken over", "worker", m.cluster.member.ID())
	return nil
}

// own makes the job run under lease: its checkpoints are fenced by it, its
// registry writes are compare-and-set from rev, and it stops at once when
// the lease moves.
func (j *job) own(lease *cluster.Lease, rev uint64) {
	j.lease, j.regRev = lease, rev
	if j.x.Checkpoints != nil {
		j.x.Checkpoints.Lineage = lease
	}
	j.x.SinkFence = j.sinkFence
	j.x.Place = j.place
	go func() {
		select {
		case <-lease.Lost():
			j.leaseLost()
		case <-j.done:
		}
	}()
}

// leaseLost stops a job whose lease another worker has taken: its tasks
// stop at once and it leaves this worker's jobs, without a word to the
// registry, which is the new owner's now.
func (j *job) leaseLost() {
	j.mu.Lock()
	j.moved = true
	j.mu.Unlock()
	j.log.Warn("lease lost: stopping the job, another worker runs it")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := j.cancel(ctx, true); err != nil && !errors.Is(err, ErrFinished) {
		j.log.Warn("job did not stop after its lease moved", "error", err)
	}
	<-j.done
	j.mgr.forget(j)
}

// forget removes a job that no longer runs here from the manager.
func (m *Manager) forget(j *job) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.jobs[j.id] == j {
		delete(m.jobs, j.id)
	}
}

// release gives a lease up, logging a failure: the lease then expires.
func (m *Manager) release(lease *cluster.Lease) {
	ctx, cancel := context.WithTimeout(context.Background(), m.cluster.member.Timeout())
	defer cancel()
	if err := lease.Release(ctx); err != nil {
		m.log.Warn("lease not released; it expires instead", "job", lease.Job(), "error", err)
	}
}

// leaveCluster stops taking jobs over and leaves the cluster; the jobs
// have been stopped (and their leases released) by then.
func (m *Manager) leaveCluster(ctx context.Context) error {
	c := m.cluster
	c.stop()
	<-c.done
	c.stopParts()
	return c.member.Leave(ctx)
}

// Workers lists the workers of the cluster with the jobs each runs; outside
// cluster mode it is nil.
func (m *Manager) Workers(context.Context) ([]WorkerInfo, error) {
	if m.cluster == nil {
		return nil, nil
	}
	ws := m.cluster.member.Workers()
	byWorker := map[string][]string{}
	for job, w := range m.cluster.member.Holders() {
		byWorker[w] = append(byWorker[w], job)
	}
	for i := range ws {
		jobs := byWorker[ws[i].ID]
		sort.Strings(jobs)
		ws[i].Jobs = jobs
	}
	return ws, nil
}

// JobOwner returns the HTTP address of the worker that runs job id, when
// that is a live worker other than this one: requests about the job go
// there.
func (m *Manager) JobOwner(id string) (string, bool) {
	if m.cluster == nil {
		return "", false
	}
	if _, ok := m.job(id); ok {
		return "", false
	}
	c := m.cluster.member
	st := c.Lease(id)
	if !st.Held || st.Holder == c.ID() || !c.Alive(st.Holder) {
		return "", false
	}
	return c.Addr(st.Holder)
}

// PlaceJob returns the HTTP address of the worker a new job should run on,
// when that is another worker: the live worker of this version with the
// most free slots.
func (m *Manager) PlaceJob() (string, bool) {
	if m.cluster == nil {
		return "", false
	}
	w, err := m.cluster.member.Place()
	if err != nil || w.ID == m.cluster.member.ID() {
		return "", false
	}
	return w.Addr, true
}

// remoteRecord is a job another worker runs (or that waits for one), from
// the registry.
func (m *Manager) remoteRecord(id string) (*jobRecord, bool) {
	if m.cluster == nil {
		return nil, false
	}
	c := m.cluster
	c.mu.Lock()
	defer c.mu.Unlock()
	rec, ok := c.records[id]
	return rec, ok
}

// remoteInfo is what the API shows of a job this worker does not run.
func (m *Manager) remoteInfo(rec *jobRecord) JobInfo {
	info := rec.info()
	if st := m.cluster.member.Lease(rec.ID); st.Held && !rec.State.Terminal() {
		info.Worker = st.Holder
	}
	return info
}

// remoteRecords are the registry's jobs this worker does not run.
func (m *Manager) remoteRecords() []*jobRecord {
	c := m.cluster
	c.mu.Lock()
	recs := make([]*jobRecord, 0, len(c.records))
	for _, rec := range c.records {
		recs = append(recs, rec)
	}
	c.mu.Unlock()
	out := recs[:0]
	for _, rec := range recs {
		if _, ok := m.job(rec.ID); !ok {
			out = append(out, rec)
		}
	}
	return out
}

// sinkFence is the fencing token of one exactly-once sink subtask under the
// job's lease: taken (a fence message written on the sink's stream) the
// first time the subtask starts under this lease, and kept for its
// restarts here, so that a worker that lost the lease keeps its old token,
// which JetStream refuses once the new owner has taken its own.
func (j *job) sinkFence(ctx context.Context, key, subject string) (*connector.Fence, error) {
	j.fenceMu.Lock()
	defer j.fenceMu.Unlock()
	if f, ok := j.fences[key]; ok {
		return f, nil
	}
	select {
	case <-j.lease.Lost():
		return nil, fmt.Errorf("job %s: %w", j.id, cluster.ErrLost)
	default:
	}
	f, err := connector.TakeFence(ctx, j.mgr.cfg.JetStream, subject, key)
	if err != nil {
		return nil, err
	}
	if j.fences == nil {
		j.fences = map[string]*connector.Fence{}
	}
	j.fences[key] = f
	return f, nil
}
