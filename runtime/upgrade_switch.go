package runtime

import (
	"context"
	"fmt"
	"time"

	"wasmstream.io/platform/checkpoint"
)

// pendingSwitch is a running job's switch to its next version: the job
// struct that runs the next version, made and checked at the request, and
// the checkpoint whose barrier stops the current one.
type pendingSwitch struct {
	next      *job
	change    change
	savepoint int64
}

// probation is a version that took over and has not been committed yet.
type probation struct {
	change change
	// from is the checkpoint the version took over at.
	from    int64
	started time.Time
	// previous is what the version before ran: its spec and modules, for
	// a rollback (and for the registry, until this version commits).
	previousSpec   []byte
	previousRefs   []JobModule
	previousCanary *canaryVersion
	// passed: a checkpoint of this version completed; it can no longer be
	// rolled back.
	passed bool
	// rollback is the reason a rollback was decided, "" before.
	rollback string
}

// switchVersion checks the next version of job old, made of data and the
// pinned module references, and triggers the checkpoint whose barrier
// hands over to it.
func (m *Manager) switchVersion(ctx context.Context, old *job, data []byte, pinned []JobModule, ch change) (SwitchInfo, error) {
	if old.x.Checkpoints == nil {
		return SwitchInfo{}, fmt.Errorf("job %s: %w", old.id, ErrNoCheckpoints)
	}
	nj, err := m.prepare(ctx, old.id, data, "", false, pinned)
	if err != nil {
		return SwitchInfo{}, err
	}
	if err := m.checkSwitch(old.x.Plan, nj.x.Plan, data); err != nil {
		return SwitchInfo{}, err
	}
	return m.triggerSwitch(old, nj, ch)
}

// triggerSwitch triggers the checkpoint whose barrier hands job old over
// to nj, checked against it, unless another switch is under way or the
// job does not run. While old runs a canary, only a promotion or a
// rollback may switch it.
func (m *Manager) triggerSwitch(old, nj *job, ch change) (SwitchInfo, error) {
	old.mu.Lock()
	defer old.mu.Unlock()
	canaryChange := ch.kind == changePromote || ch.kind == changeRollback
	// A version just switched to is CREATED until its tasks run: that
	// it is switching is the answer then, not that it does not run.
	switch {
	case old.switching != nil || old.probation != nil && !old.probation.passed:
		return SwitchInfo{}, fmt.Errorf("job %s: %w: wait until its current version is committed or rolled back", old.id, ErrSwitchInProgress)
	case old.canary != nil && !canaryChange:
		return SwitchInfo{}, fmt.Errorf("job %s: %w: it runs a canary on key groups %s; promote it or roll it back first", old.id, ErrSwitchInProgress, old.canary.KeyGroups)
	case old.canary == nil && canaryChange:
		return SwitchInfo{}, fmt.Errorf("job %s: %w", old.id, ErrNoCanary)
	case old.st != StateRunning:
		return SwitchInfo{}, fmt.Errorf("job %s is %s: %w", old.id, old.st, ErrNotRunning)
	case old.stopping != nil:
		return SwitchInfo{}, fmt.Errorf("job %s is stopping with a savepoint: %w", old.id, ErrNotRunning)
	}
	// The checkpoint is triggered holding old.mu (taken before the
	// checkpoints' mutex, as everywhere), so that the run cannot end at
	// its barrier before the switch knows which checkpoint it waits for.
	sp, err := savepoint(old.x.Checkpoints, old.id, true)
	if err != nil {
		return SwitchInfo{}, err
	}
	old.switching = &pendingSwitch{next: nj, change: ch, savepoint: sp.Stats.ID}
	version := nextVersion(old.versionsLocked())
	go old.watchSwitch(sp.Stats.ID)
	old.log.Info("job switching versions", "change", ch.kind, "version", version, "checkpoint", sp.Stats.ID)
	return SwitchInfo{Job: old.id, Version: version, FromCheckpoint: sp.Stats.ID}, nil
}

// watchSwitch abandons the switch when the checkpoint that was to hand over
// fails: the tasks go on with the current version, as after a failed
// stop-with-savepoint.
func (j *job) watchSwitch(id int64) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-j.done:
			return
		case <-t.C:
		}
		st, ok := j.x.Checkpoints.History.Get(id)
		if !ok || st.Status == checkpoint.StatusInProgress {
			continue
		}
		if st.Status == checkpoint.StatusFailed {
			j.abandonSwitch(fmt.Sprintf("checkpoint %d, which was to hand over, failed: %s", id, st.Failure))
		}
		return
	}
}

// abandonSwitch drops a pending switch, recording it as a failed version.
func (j *job) abandonSwitch(reason string) {
	j.mu.Lock()
	sw := j.switching
	if sw == nil {
		j.mu.Unlock()
		return
	}
	j.switching = nil
	failed := sw.next.newVersion(j.versionsLocked(), sw.change.kind, sw.savepoint, VersionFailed, reason)
	j.versions = appendVersion(j.versionsLocked(), failed)
	rec := j.recordLocked()
	j.mu.Unlock()
	j.log.Warn("version switch abandoned", "reason", reason)
	_ = j.persist(rec)
}

// newVersion is the history entry of the version j runs, following
// versions.
func (j *job) newVersion(versions []VersionInfo, kind string, from int64, outcome, reason string) VersionInfo {
	return VersionInfo{Version: nextVersion(versions), Change: kind, Modules: j.refs, Canary: j.canary.public(), Parallelism: parallelismOf(j.x.Plan),
		FromCheckpoint: from, Started: time.Now().UTC(), Outcome: outcome, Reason: reason}
}

// switchOver is called when the job's run ends with err: it hands over to
// the next version once the checkpoint of a pending switch completed, or
// rolls a version on probation back; it reports whether it did, so that
// the job does not end.
func (j *job) switchOver(err error) bool {
	j.mu.Lock()
	sw, pr := j.switching, j.probation
	ended := j.cancelled || j.suspended || j.moved
	j.mu.Unlock()
	if ended {
		return false
	}
	if sw != nil {
		st, ok := j.x.Checkpoints.History.Get(sw.savepoint)
		if err == nil && ok && st.Status == checkpoint.StatusCompleted {
			j.mgr.handOver(j, sw)
			return true
		}
		reason := "the job ended before the switch"
		if err != nil {
			reason = "the job failed before the switch: " + err.Error()
		}
		j.abandonSwitch(reason)
		return false
	}
	if pr == nil || pr.passed {
		return false
	}
	reason := pr.rollback
	switch {
	case reason != "":
	case err != nil:
		reason = "the new version failed: " + err.Error()
	default:
		// It ended (a bounded input) before any checkpoint of it
		// completed: nothing of it is committed.
		reason = "the new version ended before its first checkpoint"
	}
	j.mgr.rollBack(j, pr, reason)
	return true
}

// handOver starts the next version of old, whose run stopped at the
// barrier of the switch's checkpoint: same job id, same checkpoints, under
// probation.
func (m *Manager) handOver(old *job, sw *pendingSwitch) {
	nj := sw.next
	old.mu.Lock()
	versions := withOutcome(old.versionsLocked(), VersionReplaced, "")
	pr := &probation{change: sw.change, from: sw.savepoint, started: time.Now().UTC(), previousSpec: old.spec, previousRefs: old.refs, previousCanary: old.canary}
	if old.probation != nil && !old.probation.passed {
		pr.previousSpec, pr.previousRefs, pr.previousCanary = old.probation.previousSpec, old.probation.previousRefs, old.probation.previousCanary
	}
	nj.created, nj.ends, nj.restarts = old.created, old.ends, old.restarts
	nj.from = old.from
	old.mu.Unlock()
	if sw.change.kind == changeRollback && !sw.change.probation() {
		// A return to a version the job ran before (a canary's
		// rollback) is committed with the checkpoint it takes over at;
		// every other switch, a rescale too, commits once a checkpoint
		// of the new version completes, and rolls back if it fails
		// before.
		nj.versions = appendVersion(versions, nj.newVersion(versions, sw.change.kind, sw.savepoint, VersionRunning, ""))
		m.adopt(old, nj, nil)
		nj.log.Info("job switched versions", "change", sw.change.kind, "version", len(nj.versions), "checkpoint", sw.savepoint)
		return
	}
	nj.versions = appendVersion(versions, nj.newVersion(versions, sw.change.kind, sw.savepoint, VersionProbation, ""))
	nj.probation = pr
	m.adopt(old, nj, &probationFence{j: nj})
	nj.log.Info("job switched versions", "change", sw.change.kind, "version", len(nj.versions), "checkpoint", sw.savepoint)
}

// adopt makes nj run in old's place: it shares old's checkpoints (their
// ids and history go on), its lease in cluster mode, and its registry
// record; fence guards its checkpoints' completions when not nil.
func (m *Manager) adopt(old, nj *job, fence *probationFence) {
	cp := old.x.Checkpoints
	inner := cp.Lineage
	if f, ok := inner.(*probationFence); ok {
		inner = f.inner
	}
	cp.Lineage = inner
	nj.x.Checkpoints = cp
	if old.lease != nil {
		old.persistMu.Lock()
		rev := old.regRev
		old.persistMu.Unlock()
		old.fenceMu.Lock()
		nj.fences = old.fences
		old.fenceMu.Unlock()
		nj.own(old.lease, rev)
	}
	if fence != nil {
		fence.inner = cp.Lineage
		cp.Lineage = fence
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		// The platform is shutting down: the registry still names the
		// version that stopped at E, which the next start resumes. The
		// new version ends at once, as a suspended job (releasing its
		// lease in cluster mode).
		old.log.Info("version switch not started: the platform is shutting down")
		nj.mu.Lock()
		nj.cancelled, nj.suspended = true, true
		nj.mu.Unlock()
		nj.start()
		return
	}
	m.jobs[nj.id] = nj
	m.mu.Unlock()
	nj.mu.Lock()
	rec := nj.recordLocked()
	nj.mu.Unlock()
	_ = nj.persist(rec)
	nj.start()
}

// rollBack runs the version before j's again, from the checkpoint j took
// over at, after j failed during its probation.
func (m *Manager) rollBack(j *job, pr *probation, reason string) {
	j.log.Warn("new version failed during its probation: rolling back", "checkpoint", pr.from, "reason", reason)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Checkpoints after the one the version took over at are its own,
	// none of them completed: the previous version must not restore them.
	if err := m.discardAfter(ctx, j.id, pr.from); err != nil {
		j.log.Warn("rollback: checkpoints after the switch not removed", "error", err)
	}
	j.mu.Lock()
	versions := withOutcome(j.versionsLocked(), VersionRolledBack, reason)
	j.mu.Unlock()
	// The savepoint the job was submitted from is not checked again: the
	// shared checkpoints keep it, and E comes after it.
	prev, err := m.prepare(ctx, j.id, pr.previousSpec, "", false, pr.previousRefs)
	if err == nil {
		err = m.applyCanary(ctx, prev, pr.previousCanary)
	}
	if err != nil {
		j.mu.Lock()
		j.versions = versions
		j.mu.Unlock()
		j.setState(StateFailing, "rollback: "+err.Error())
		j.setState(StateFailed, "")
		return
	}
	prev.created, prev.ends, prev.restarts, prev.from = j.created, j.ends, j.restarts, j.from
	prev.versions = appendVersion(versions, prev.newVersion(versions, changeRollback, pr.from, VersionRunning, ""))
	m.adopt(j, prev, nil)
}

// discardAfter deletes the job's stored checkpoints newer than id.
func (m *Manager) discardAfter(ctx context.Context, job string, id int64) error {
	stored, err := m.checkpoints.List(ctx, job)
	if err != nil {
		return err
	}
	for _, md := range stored {
		if md.ID > id {
			if err := m.checkpoints.Delete(ctx, job, md.ID); err != nil {
				return err
			}
		}
	}
	return nil
}
