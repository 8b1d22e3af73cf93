package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"wasmstream.io/platform/cluster"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/exec"
)

// Placement values of the spec.
const placementSpread = "spread"

// place is the job's exec.Placer under its lease: it places each slot
// (subtask i of every chain runs in slot i) on a worker, fixes the bounded
// sources' ends for every worker, and records the assignment in KV, which
// the other workers watch to run their subtasks.
func (j *job) place(ctx context.Context, restoreJob string, restore int64, tasks []string) (*exec.Placement, error) {
	member := j.mgr.cluster.member
	slots := j.slots()
	workers := member.PlaceSlots(slots, j.slotsHere(), j.x.Plan.Job.Placement == placementSpread)
	j.mu.Lock()
	version, err := json.Marshal(j.runningLocked())
	j.mu.Unlock()
	if err != nil {
		return nil, err
	}
	a := cluster.Assignment{Tasks: map[string]string{}, RestoreJob: restoreJob, Restore: restore, Version: version}
	for _, name := range tasks {
		i, err := subtaskOf(name)
		if err != nil {
			return nil, err
		}
		a.Tasks[name] = workers[i%slots]
	}
	spread := len(a.Workers()) > 1
	if spread {
		ends, err := j.boundedEnds(ctx)
		if err != nil {
			return nil, err
		}
		a.Ends = ends
	}
	j.mu.Lock()
	wasSpread := j.assignment != nil && len(j.assignment.Workers()) > 1
	j.mu.Unlock()
	if spread || wasSpread {
		// A sink subtask may have run elsewhere since this worker took
		// its fence: each run takes its own.
		j.fenceMu.Lock()
		j.fences = nil
		j.fenceMu.Unlock()
	}
	a, err = j.lease.Assign(ctx, a)
	if err != nil {
		return nil, err
	}
	j.mu.Lock()
	j.assignment = &a
	j.mu.Unlock()
	if spread {
		j.log.Info("job placed on several workers", "run", a.Run, "workers", strings.Join(a.Workers(), ","))
	}
	return &exec.Placement{Run: a.Run, Self: member.ID(), Leader: member.ID(), Tasks: a.Tasks,
		RestoreJob: restoreJob, Restore: restore, Alive: sameIncarnations(member, a.Workers())}, nil
}

// sameIncarnations says whether a worker is alive and still the process
// that was when the run was placed: one killed and restarted under the
// same id within the heartbeat timeout lost its part of the run all the
// same.
func sameIncarnations(member *cluster.Member, workers []string) func(string) bool {
	started := map[string]time.Time{}
	for _, w := range workers {
		started[w], _ = member.Incarnation(w)
	}
	return func(w string) bool {
		now, ok := member.Incarnation(w)
		return ok && member.Alive(w) && now.Equal(started[w])
	}
}

// slotsOn are the slots worker w takes of a run: the subtask indexes a
// places on it (subtask i of every chain shares slot i).
func slotsOn(a *cluster.Assignment, w string) int {
	seen := map[int]bool{}
	for name, on := range a.Tasks {
		if on == w {
			if i, err := subtaskOf(name); err == nil {
				seen[i] = true
			}
		}
	}
	return len(seen)
}

// subtaskOf is i of a subtask name "<vertex>[i]".
func subtaskOf(name string) (int, error) {
	open := strings.LastIndexByte(name, '[')
	if open < 0 || !strings.HasSuffix(name, "]") {
		return 0, fmt.Errorf("subtask name %q", name)
	}
	return strconv.Atoi(name[open+1 : len(name)-1])
}

// boundedEnds fixes the end of each bounded JetStream source, so that the
// workers that run its subtasks all stop at the same place.
func (j *job) boundedEnds(ctx context.Context) (map[string]map[string]uint64, error) {
	out := map[string]map[string]uint64{}
	for _, v := range j.x.Plan.Vertices {
		if v.Source == nil || v.Source.JetStream == nil || !v.Source.JetStream.Bounded {
			continue
		}
		s := v.Source.JetStream
		end, err := j.boundedEnd(v.ID, func() (map[string]uint64, error) {
			return connector.BoundedEnd(ctx, j.mgr.cfg.JetStream, s.Stream, s.Subjects)
		})
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", v.ID, err)
		}
		out[v.ID] = end
	}
	return out, nil
}

// part is this worker's share of a run another worker leads.
type part struct {
	run    uint64
	slots  int
	cancel context.CancelFunc
	done   chan struct{}
}

// parts are the parts of jobs this worker runs for their leaders.
type parts struct {
	mu   sync.Mutex
	jobs map[string]*part
}

// sawAssignment starts or stops this worker's part of a job as its
// assignment changes: a new run replaces the part of the previous one.
func (m *Manager) sawAssignment(job string, a *cluster.Assignment) {
	c := m.cluster
	self := c.member.ID()
	mine := 0
	if a != nil && a.Leader != self {
		mine = slotsOn(a, self)
	}
	c.parts.mu.Lock()
	defer c.parts.mu.Unlock()
	prev := c.parts.jobs[job]
	if prev != nil && a != nil && prev.run >= a.Run {
		return
	}
	if prev != nil {
		prev.cancel()
		delete(c.parts.jobs, job)
	}
	if mine == 0 || c.closing || a.Written.Before(c.member.Self().Started) {
		// A run placed before this process started had its part here
		// in an earlier incarnation: the leader restarts it.
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &part{run: a.Run, slots: mine, cancel: cancel, done: make(chan struct{})}
	c.parts.jobs[job] = p
	go func() {
		defer close(p.done)
		defer cancel()
		if prev != nil {
			<-prev.done
		}
		m.runPart(ctx, *a)
		c.parts.mu.Lock()
		if c.parts.jobs[job] == p {
			delete(c.parts.jobs, job)
		}
		c.parts.mu.Unlock()
	}()
}

// runPart runs this worker's subtasks of assignment a until they end, the
// run ends, or its leader is gone.
func (m *Manager) runPart(ctx context.Context, a cluster.Assignment) {
	log := m.log.With("job", a.Job, "run", a.Run, "leader", a.Leader)
	// The version the leader runs, not the registry's record: during a
	// rescale's or an upgrade's probation that names the version before,
	// whose subtasks are not the run's.
	rec := &jobRecord{}
	if err := json.Unmarshal(a.Version, rec); err != nil || rec.ID != a.Job {
		log.Warn("part of a job not started: the assignment names no version of the job", "error", err)
		return
	}
	j, err := m.prepareRecord(ctx, rec) // upgrade_canary.go
	if err != nil {
		log.Warn("part of a job not started", "error", err)
		return
	}
	member := m.cluster.member
	ends := a.Ends
	j.x.BoundedEnd = func(source string, compute func() (map[string]uint64, error)) (map[string]uint64, error) {
		if end, ok := ends[source]; ok {
			return end, nil
		}
		return nil, fmt.Errorf("source %s: the leader fixed no end for it", source)
	}
	j.x.Observer = partObserver{j}
	j.x.SinkFence = j.partFence
	// The part stops once the run's leader is gone or no longer holds the
	// job's lease: the next run places it anew.
	watch, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		t := time.NewTicker(member.Timeout() / 4)
		defer t.Stop()
		for {
			select {
			case <-watch.Done():
				return
			case <-t.C:
			}
			if st := member.Lease(a.Job); !member.Alive(a.Leader) || st.Holder != a.Leader {
				log.Warn("the job's leader is gone: its part here stops")
				stop()
				return
			}
		}
	}()
	pl := &exec.Placement{Run: a.Run, Self: member.ID(), Leader: a.Leader, Tasks: a.Tasks,
		RestoreJob: a.RestoreJob, Restore: a.Restore, Alive: sameIncarnations(member, a.Workers())}
	log.Info("running part of a job", "tasks", len(a.Tasks))
	if err := j.x.RunPart(watch, pl); err != nil && !errors.Is(err, context.Canceled) {
		log.Warn("part of a job failed", "error", err)
		return
	}
	log.Info("part of a job ended")
}

// partFence takes a sink subtask's fencing token for this part's run: its
// commits then fence off whatever ran the subtask before.
func (j *job) partFence(ctx context.Context, key, subject string) (*connector.Fence, error) {
	j.fenceMu.Lock()
	defer j.fenceMu.Unlock()
	if f, ok := j.fences[key]; ok {
		return f, nil
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

// partObserver samples a part's backpressure; the job's state is its
// leader's to record.
type partObserver struct{ j *job }

func (o partObserver) Running(tasks []*exec.Task) func() {
	o.j.setTasks(tasks)
	return o.j.pressure.Start(tasks)
}

func (partObserver) Restarting(int, time.Duration, error) {}

// partSlots are the slots this worker's parts take.
func (c *clusterState) partSlots() int {
	c.parts.mu.Lock()
	defer c.parts.mu.Unlock()
	n := 0
	for _, p := range c.parts.jobs {
		n += p.slots
	}
	return n
}

// stopParts stops this worker's parts and waits for them, as it leaves
// the cluster.
func (c *clusterState) stopParts() {
	c.parts.mu.Lock()
	c.closing = true
	var running []*part
	for _, p := range c.parts.jobs {
		p.cancel()
		running = append(running, p)
	}
	c.parts.mu.Unlock()
	for _, p := range running {
		<-p.done
	}
}

// subtaskWorkers are the workers of each subtask of vertex v's chain, by
// subtask index, from the job's assignment; nil when it has none.
func subtaskWorkers(a *cluster.Assignment, task string, parallelism int) []string {
	if a == nil {
		return nil
	}
	out := make([]string, parallelism)
	for i := range out {
		out[i] = a.Tasks[task+"["+strconv.Itoa(i)+"]"]
	}
	return out
}
