package cluster

import (
	"errors"
	"sort"
)

// ErrNoWorker: no live worker of this worker's version can take a job.
var ErrNoWorker = errors.New("no live worker of this version")

func sortWorkers(ws []WorkerInfo) {
	sort.Slice(ws, func(i, j int) bool { return ws[i].ID < ws[j].ID })
}

// Place chooses the worker for a new job: the live worker of this worker's
// version with the most free slots, the lowest id on a tie. This worker's
// own load is taken as it is now, the others' as their last heartbeat said.
func (m *Member) Place() (Worker, error) {
	ws := m.candidates(m.cfg.Worker.Version)
	if len(ws) == 0 {
		return Worker{}, ErrNoWorker
	}
	return ws[0], nil
}

// Preferred says whether this worker is the one to take over a job whose
// lease expired, among live workers of version (this worker's when empty):
// the one with the most free slots. The others wait, and take it only if
// the preferred one does not.
func (m *Member) Preferred(version string) bool {
	if version == "" {
		version = m.cfg.Worker.Version
	}
	ws := m.candidates(version)
	return len(ws) > 0 && ws[0].ID == m.ID()
}

// candidates are the live workers of version, the one with the most free
// slots first, then by id.
func (m *Member) candidates(version string) []Worker {
	var ws []Worker
	for _, w := range m.Workers() {
		if !w.Alive || w.Version != version {
			continue
		}
		if w.ID == m.ID() {
			w.Jobs, w.Used = m.report()
		}
		ws = append(ws, w.Worker)
	}
	sort.SliceStable(ws, func(i, j int) bool {
		if ws[i].Free() != ws[j].Free() {
			return ws[i].Free() > ws[j].Free()
		}
		return ws[i].ID < ws[j].ID
	})
	return ws
}

// Housekeeper says whether this worker is the one to do the cluster's
// chores no job owns (removing ended jobs past their retention): the live
// worker with the lowest id. Two workers that both think so only repeat
// idempotent work.
func (m *Member) Housekeeper() bool {
	for _, w := range m.Workers() {
		if w.Alive {
			return w.ID == m.ID()
		}
	}
	return false
}

// HasLive says whether a live worker of version is registered.
func (m *Member) HasLive(version string) bool {
	return len(m.candidates(version)) > 0
}
