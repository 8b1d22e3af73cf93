package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"wasmstream.io/platform/runtime/exec"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
)

// ErrNoCanary: promote and rollback act on a canary, and the job runs none.
var ErrNoCanary = errors.New("the job runs no canary")

// CanaryRequest asks an upgrade to run the new version on part of the key
// space first: KeyGroups is a range of key groups, "first-last" or one
// key group, that covers whole subtasks of each keyed operator the new
// version changes.
type CanaryRequest struct {
	KeyGroups string `json:"key_groups"`
}

// canaryVersion is a canary a job runs: its key groups, and the spec and
// modules of the version that runs on them. The job's own spec and
// modules run everywhere else. The registry keeps it with the job.
type canaryVersion struct {
	KeyGroups string      `json:"key_groups"`
	Spec      []byte      `json:"spec"`
	Modules   []JobModule `json:"modules,omitempty"`
}

// CanaryVersion is the canary of a version in a job's history: the key
// groups that ran the modules named here instead of the version's own.
type CanaryVersion struct {
	KeyGroups string      `json:"key_groups"`
	Modules   []JobModule `json:"modules,omitempty"`
}

// CanaryInfo is the canary a job runs, with each version's figures of
// every keyed vertex the canary changes (stable: the job's own version,
// canary: the new one).
type CanaryInfo struct {
	CanaryVersion
	Figures []exec.CanaryFigures `json:"figures"`
}

// The changes of a canary's life.
const (
	changeCanary  = "canary"
	changePromote = "promote"
)

// public is what a version's history shows of the canary; nil for none.
func (c *canaryVersion) public() *CanaryVersion {
	if c == nil {
		return nil
	}
	return &CanaryVersion{KeyGroups: c.KeyGroups, Modules: c.Modules}
}

// upgradeCanary switches job old to a version that runs the new spec data
// (with the pinned modules) on the key groups of req, and the job's own
// version on the others.
func (m *Manager) upgradeCanary(ctx context.Context, old *job, data []byte, pinned []JobModule, req *CanaryRequest, ch change) (SwitchInfo, error) {
	if err := old.refuseDuringCanary(); err != nil {
		return SwitchInfo{}, err
	}
	if old.x.Checkpoints == nil {
		return SwitchInfo{}, fmt.Errorf("job %s: %w", old.id, ErrNoCheckpoints)
	}
	next, err := m.prepare(ctx, old.id, data, "", false, pinned)
	if err != nil {
		return SwitchInfo{}, err
	}
	if err := m.checkSwitch(old.x.Plan, next.x.Plan, data); err != nil {
		return SwitchInfo{}, err
	}
	first, last, err := m.checkCanary(old.x.Plan, next.x.Plan, req.KeyGroups)
	if err != nil {
		return SwitchInfo{}, listProblems(err, nil)
	}
	cv := &canaryVersion{KeyGroups: formatKeyGroups(first, last), Spec: data, Modules: next.refs}
	nj, err := m.prepare(ctx, old.id, old.spec, "", false, old.refs)
	if err != nil {
		return SwitchInfo{}, err
	}
	nj.runCanary(cv, next.x.Plan, first, last)
	return m.triggerSwitch(old, nj, ch)
}

// runCanary makes j run the canary cv, whose version's plan is p, on key
// groups first to last.
func (j *job) runCanary(cv *canaryVersion, p *plan.Plan, first, last int) {
	j.canary = cv
	j.x.Canary = &exec.Canary{Plan: p, First: first, Last: last}
}

// applyCanary makes j, built from a registry record, run the record's
// canary, if any.
func (m *Manager) applyCanary(ctx context.Context, j *job, cv *canaryVersion) error {
	if cv == nil {
		return nil
	}
	next, err := m.prepare(ctx, j.id, cv.Spec, "", false, cv.Modules)
	if err != nil {
		return fmt.Errorf("canary: %w", err)
	}
	first, last, err := parseKeyGroups(cv.KeyGroups, j.x.Plan.Job.MaxParallelism)
	if err != nil {
		return err
	}
	j.runCanary(cv, next.x.Plan, first, last)
	return nil
}

// refuseDuringCanary refuses another switch than a promotion or rollback
// while the job runs a canary.
func (j *job) refuseDuringCanary() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.canary != nil {
		return fmt.Errorf("job %s: %w: it runs a canary on key groups %s; promote it or roll it back first", j.id, ErrSwitchInProgress, j.canary.KeyGroups)
	}
	return nil
}

// PromoteRequest is a promotion's probation: as an upgrade's, the whole
// key space being new to the canary's version.
type PromoteRequest struct {
	Probation Probation `json:"probation,omitzero"`
}

// PromoteJob switches a job that runs a canary to the canary's version on
// every key group, at the barrier of a checkpoint, under probation (a
// failure during it returns to the canary from that checkpoint).
func (m *Manager) PromoteJob(ctx context.Context, id string, req PromoteRequest) (SwitchInfo, error) {
	records, wait, err := req.Probation.bounds()
	if err != nil {
		return SwitchInfo{}, listProblems(err, nil)
	}
	j, cv, err := m.canaryOf(id)
	if err != nil {
		return SwitchInfo{}, err
	}
	return m.switchVersion(ctx, j, cv.Spec, cv.Modules, change{kind: changePromote, records: records, wait: wait})
}

// RollbackJob switches a job that runs a canary back to its own version on
// every key group, at the barrier of a checkpoint. A canary still on
// probation is rolled back from the checkpoint it took over at, as a
// failed one is.
func (m *Manager) RollbackJob(ctx context.Context, id string) (SwitchInfo, error) {
	j, _, err := m.canaryOf(id)
	if err != nil {
		return SwitchInfo{}, err
	}
	j.mu.Lock()
	if pr := j.probation; pr != nil && !pr.passed {
		if pr.rollback == "" {
			pr.rollback = "rolled back on request"
		}
		cancel, version := j.cancelRun, nextVersion(j.versionsLocked())
		j.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return SwitchInfo{Job: j.id, Version: version, FromCheckpoint: pr.from}, nil
	}
	data, refs := j.spec, j.refs
	j.mu.Unlock()
	return m.switchVersion(ctx, j, data, refs, change{kind: changeRollback})
}

// canaryOf is job id and the canary it runs.
func (m *Manager) canaryOf(id string) (*job, *canaryVersion, error) {
	j, ok := m.job(id)
	if !ok {
		return nil, nil, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	j.mu.Lock()
	cv := j.canary
	j.mu.Unlock()
	if cv == nil {
		return nil, nil, fmt.Errorf("job %s: %w (platform job upgrade --canary starts one)", id, ErrNoCanary)
	}
	return j, cv, nil
}

// checkCanary checks a canary's key groups against the running plan old
// and the canary version's plan nw, and returns them: a range inside the
// job's key groups that covers whole subtasks of every keyed vertex nw
// changes, and not all of them; nw keeps old's parallelism, and its
// changed vertices declare the same states as old's, so that either
// version restores the other's snapshots.
func (m *Manager) checkCanary(old, nw *plan.Plan, keyGroups string) (first, last int, err error) {
	maxPar := old.Job.MaxParallelism
	first, last, err = parseKeyGroups(keyGroups, maxPar)
	if err != nil {
		return 0, 0, err
	}
	for _, v := range old.Vertices {
		if nv := nw.Vertex(v.ID); nv != nil && nv.Parallelism != v.Parallelism {
			return 0, 0, fmt.Errorf("%w: canary: the new version gives %q parallelism %d, it runs at %d: a canary keeps the job's parallelism", ErrInvalidJob, v.ID, nv.Parallelism, v.Parallelism)
		}
	}
	c := &exec.Canary{Plan: nw, First: first, Last: last}
	var problems []string
	changed, whole := 0, true
	for _, v := range old.Vertices {
		if !c.Changes(v) {
			continue
		}
		changed++
		if v.Broadcast != nil {
			problems = append(problems, fmt.Sprintf("canary: %s: a broadcast_process operator cannot run a canary: every subtask holds a copy of the broadcast state that must stay the same, and two versions would change the copies differently (upgrade without a canary)", vertexPath(nw, v.ID)))
			continue
		}
		covered := 0
		for i := range v.Parallelism {
			r := state.RangeOf(maxPar, v.Parallelism, i)
			in := r.First >= first && r.Last <= last
			if !in && r.Last >= first && r.First <= last {
				problems = append(problems, fmt.Sprintf("canary.key_groups: %s splits subtask %d of %q (key groups %d-%d): a canary covers whole subtasks; %q's are %s",
					keyGroups, i, v.ID, r.First, r.Last, v.ID, subtaskRanges(maxPar, v.Parallelism)))
				break
			}
			if in {
				covered++
			}
		}
		whole = whole && covered == v.Parallelism
		problems = append(problems, m.canaryStateProblems(old, nw, v)...)
	}
	switch {
	case changed == 0:
		problems = append(problems, "canary: the new version runs the functions of every keyed operator the job runs: nothing to run as a canary (upgrade without one)")
	case len(problems) == 0 && whole:
		problems = append(problems, fmt.Sprintf("canary.key_groups: %s covers every subtask of the keyed operators it changes: upgrade without a canary", keyGroups))
	}
	if len(problems) > 0 {
		return 0, 0, fmt.Errorf("%w: %s", ErrInvalidJob, strings.Join(problems, "; "))
	}
	return first, last, nil
}

// canaryStateProblems lists the states the new module of vertex v declares
// that its running module does not, or with another kind: a rollback
// would not restore them (upgrade.go's stateProblems checks the other way).
func (m *Manager) canaryStateProblems(old, nw *plan.Plan, v *plan.Vertex) []string {
	nv := nw.Vertex(v.ID)
	if v.Fn == nil || nv.Fn == nil || v.Fn.Module == nv.Fn.Module {
		return nil
	}
	od, _ := m.lookupDescription(v.Fn.Module)
	nd, _ := m.lookupDescription(nv.Fn.Module)
	var problems []string
	for _, st := range nd.States {
		if i := od.LookupState(st.Name); i < 0 || od.States[i].Kind != st.Kind {
			problems = append(problems, fmt.Sprintf("canary: %s: the new module declares a %s state %q the running one does not: a canary's states are the running module's, so that a rollback restores them",
				vertexPath(nw, v.ID), st.Kind, st.Name))
		}
	}
	return problems
}

// parseKeyGroups reads a range of key groups, "first-last" or one key
// group, within [0, maxParallelism).
func parseKeyGroups(s string, maxParallelism int) (first, last int, err error) {
	lo, hi, isRange := strings.Cut(strings.TrimSpace(s), "-")
	first, err1 := strconv.Atoi(strings.TrimSpace(lo))
	last, err2 := first, error(nil)
	if isRange {
		last, err2 = strconv.Atoi(strings.TrimSpace(hi))
	}
	switch {
	case s == "":
		return 0, 0, fmt.Errorf("%w: canary.key_groups: give a range of key groups, like 0-15", ErrInvalidJob)
	case err1 != nil || err2 != nil || first < 0:
		return 0, 0, fmt.Errorf("%w: canary.key_groups: %q is not a range of key groups, like 0-15", ErrInvalidJob, s)
	case first > last:
		return 0, 0, fmt.Errorf("%w: canary.key_groups: %q is reversed: its first key group is above its last", ErrInvalidJob, s)
	case last >= maxParallelism:
		return 0, 0, fmt.Errorf("%w: canary.key_groups: %q is outside the job's key groups, 0-%d (max_parallelism %d)", ErrInvalidJob, s, maxParallelism-1, maxParallelism)
	}
	return first, last, nil
}

// formatKeyGroups writes a range as parseKeyGroups reads it.
func formatKeyGroups(first, last int) string {
	return fmt.Sprintf("%d-%d", first, last)
}

// subtaskRanges lists the key groups of each subtask of a vertex with
// parallelism subtasks.
func subtaskRanges(maxParallelism, parallelism int) string {
	out := make([]string, 0, parallelism)
	for i := range parallelism {
		r := state.RangeOf(maxParallelism, parallelism, i)
		out = append(out, formatKeyGroups(r.First, r.Last))
	}
	return strings.Join(out, ", ")
}

// canaryInfo is what the API shows of the canary j runs; nil for none.
func (j *job) canaryInfo(cv *canaryVersion) *CanaryInfo {
	if cv == nil {
		return nil
	}
	return &CanaryInfo{CanaryVersion: *cv.public(), Figures: j.x.CanaryFigures(j.runningTasks())}
}

// prepareRecord builds the job a registry record keeps, with its canary.
func (m *Manager) prepareRecord(ctx context.Context, rec *jobRecord) (*job, error) {
	j, err := m.prepare(ctx, rec.ID, rec.Spec, rec.FromSavepoint, rec.AllowNonRestored, rec.Modules)
	if err != nil {
		return nil, err
	}
	if err := m.applyCanary(ctx, j, rec.Canary); err != nil {
		return nil, err
	}
	return j, nil
}
