package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// AssignmentsBucket is the key-value bucket of the jobs' placements, one
// key per job id: which worker runs each subtask of the job's current run.
const AssignmentsBucket = "PLATFORM_ASSIGNMENTS"

// Assignment is where one run of a job runs: written by the job's leader
// (its lease holder) as each run starts, read by every worker, each of which
// runs the subtasks assigned to it. The entry's revision numbers the run:
// it is new for every run, so a run's network channels never hear an
// earlier run's messages.
type Assignment struct {
	Job string `json:"job"`
	// Leader holds the job's lease and runs its checkpoint coordinator;
	// Lease is the lease's revision when it wrote the assignment.
	Leader string `json:"leader"`
	Lease  uint64 `json:"lease"`
	// Tasks maps each subtask, "<chain head>[<index>]", to its worker.
	Tasks map[string]string `json:"tasks"`
	// RestoreJob and Restore name the checkpoint (or savepoint) the run
	// restores; Restore is 0 for none.
	RestoreJob string `json:"restore_job,omitempty"`
	Restore    int64  `json:"restore,omitempty"`
	// Ends fixes each bounded source's end (by source id, then filter)
	// for every worker that runs one of its subtasks.
	Ends map[string]map[string]uint64 `json:"ends,omitempty"`
	// Version is the version of the job the run runs, encoded by the
	// leader's runtime: the other workers build their subtasks from it,
	// since the job's registry record can name another version (the one
	// before, while a new one is on probation).
	Version json.RawMessage `json:"version"`
	// Written is when the leader wrote it.
	Written time.Time `json:"written"`
	// Run is the entry's revision, filled in when read.
	Run uint64 `json:"-"`
}

// Workers are the workers the assignment uses, sorted.
func (a *Assignment) Workers() []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range a.Tasks {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	sort.Strings(out)
	return out
}

// Assign records a's run of the lease's job with compare-and-set on the
// entry's revision as this worker last read it, and returns the
// assignment with its run number. A worker that knows its lease lost, or
// finds the entry written under a newer lease of another worker (it took
// the job over while this one was frozen), writes nothing.
func (l *Lease) Assign(ctx context.Context, a Assignment) (Assignment, error) {
	l.mu.Lock()
	lost := l.isLost
	a.Job, a.Leader, a.Lease, a.Written = l.rec.Job, l.m.ID(), l.rev, time.Now().UTC()
	l.mu.Unlock()
	if lost {
		return a, fmt.Errorf("job %s: %w", a.Job, ErrLost)
	}
	data, err := json.Marshal(a)
	if err != nil {
		return a, err
	}
	kv := l.m.assignments
	var rev uint64
	entry, err := kv.Get(ctx, a.Job)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		rev, err = kv.Create(ctx, a.Job, data)
	case err != nil:
	default:
		var cur Assignment
		if json.Unmarshal(entry.Value(), &cur) == nil && cur.Leader != a.Leader && cur.Lease > a.Lease {
			return a, fmt.Errorf("job %s: assigned by %s under a newer lease: %w", a.Job, cur.Leader, ErrLost)
		}
		rev, err = kv.Update(ctx, a.Job, data, entry.Revision())
	}
	if isConflict(err) {
		return a, fmt.Errorf("job %s: assignment written meanwhile by another worker: %w", a.Job, ErrLost)
	}
	if err != nil {
		return a, fmt.Errorf("cluster: assignment of job %s: %w", a.Job, err)
	}
	a.Run = rev
	l.m.sawAssignment(a.Job, &a)
	return a, nil
}

// Assignment is the job's latest assignment this worker has seen, if any.
func (m *Member) Assignment(job string) (Assignment, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.assigned[job]
	if !ok {
		return Assignment{}, false
	}
	return *a, true
}

// OnAssignment makes fn hear of every job's assignment as it changes (nil
// when it was removed); set it before the first assignment matters. Calls
// may come from the watch and from Assign at once, so fn orders them by
// Run. fn must not block for long.
func (m *Member) OnAssignment(fn func(job string, a *Assignment)) {
	m.mu.Lock()
	m.onAssign = fn
	m.mu.Unlock()
}

// RemoveAssignment deletes the assignment of a job that has ended.
func (m *Member) RemoveAssignment(ctx context.Context, job string) error {
	if err := m.assignments.Purge(ctx, job); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("cluster: remove the assignment of job %s: %w", job, err)
	}
	return nil
}

// sawAssignment records a newer assignment of job (nil: removed) and tells
// the listener.
func (m *Member) sawAssignment(job string, a *Assignment) {
	m.mu.Lock()
	if old, ok := m.assigned[job]; ok && a != nil && old.Run >= a.Run {
		m.mu.Unlock()
		return
	}
	if a == nil {
		delete(m.assigned, job)
	} else {
		m.assigned[job] = a
	}
	fn := m.onAssign
	m.mu.Unlock()
	if fn != nil {
		fn(job, a)
	}
}

// watchAssignments follows the assignments bucket until ctx ends.
func (m *Member) watchAssignments(ctx context.Context) error {
	w, err := m.assignments.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("cluster: watch assignments: %w", err)
	}
	m.done.Add(1)
	go func() {
		defer m.done.Done()
		defer func() { _ = w.Stop() }()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e == nil {
					continue
				}
				if e.Operation() != jetstream.KeyValuePut {
					m.sawAssignment(e.Key(), nil)
					continue
				}
				var a Assignment
				if err := json.Unmarshal(e.Value(), &a); err != nil {
					m.log.Warn("unreadable assignment", "key", e.Key(), "error", err)
					continue
				}
				a.Run = e.Revision()
				m.sawAssignment(e.Key(), &a)
			}
		}
	}()
	return nil
}

// PlaceSlots chooses a worker for each of a job's slots (slot i runs
// subtask i of every chain, as Flink's slot sharing does), with this worker,
// the job's leader, first. ownSlots are the slots this worker's load
// already counts for the job. Spread puts the slots round robin over every
// live worker of this version; otherwise the leader takes as many as it
// has free, then the others by their free slots, and slots beyond every
// worker's free ones go round robin over them all.
func (m *Member) PlaceSlots(slots, ownSlots int, spread bool) []string {
	self := m.ID()
	selfFree := 0
	var others []Worker
	for _, w := range m.candidates(m.cfg.Worker.Version) {
		if w.ID == self {
			selfFree = w.Free() + ownSlots
			continue
		}
		others = append(others, w)
	}
	all := append([]Worker{{ID: self, Slots: selfFree}}, others...)
	out := make([]string, slots)
	if spread {
		n := min(len(all), slots)
		for i := range out {
			out[i] = all[i%n].ID
		}
		return out
	}
	i := 0
	for _, w := range all {
		free := w.Free()
		if w.ID == self {
			free = selfFree
		}
		for ; free > 0 && i < slots; free-- {
			out[i] = w.ID
			i++
		}
	}
	for k := 0; i < slots; i, k = i+1, k+1 {
		out[i] = all[k%len(all)].ID
	}
	return out
}

// Incarnation is when worker id's process started, as its registration
// says, if it is registered: a worker restarted under the same id is
// another incarnation, and runs nothing of a run placed before it.
func (m *Member) Incarnation(id string) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.seen[id]
	if !ok || s.gone {
		return time.Time{}, false
	}
	return s.w.Started, true
}
