package runtime

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/runtime/spec"
)

// ErrSwitchInProgress: the job is already switching to another version, or
// the version it switched to is still on probation.
var ErrSwitchInProgress = errors.New("the job is switching versions")

// UpgradeRequest is a new version of a running job: a module that takes
// the place of the one the job runs, a new spec of the same graph shape,
// or both (the spec's module references then all name Module).
type UpgradeRequest struct {
	// Module is an id, name or name@version.
	Module string `json:"module,omitempty"`
	// Spec is a job spec, JSON or YAML; empty keeps the job's.
	Spec string `json:"spec,omitempty"`
	// Probation bounds the time the new version may still be rolled back.
	Probation Probation `json:"probation,omitzero"`
	// Canary, when set, runs the new version on these key groups only,
	// until PromoteJob or RollbackJob (upgrade_canary.go).
	Canary *CanaryRequest `json:"canary,omitempty"`
}

// Probation is how long a new version is watched before it is committed:
// until its UDF operators have processed Records records or Time has
// passed since it took over, whichever comes first. The first checkpoint
// that completes after that commits it; until then no checkpoint of it
// completes, so nothing it wrote is committed, and a failure rolls it back.
type Probation struct {
	Records int64  `json:"records,omitempty"`
	Time    string `json:"time,omitempty"`
}

// Probation defaults.
const (
	DefaultProbationRecords = 100
	DefaultProbationTime    = 30 * time.Second
)

// bounds reads the probation's bounds, with defaults for zero fields.
func (p Probation) bounds() (int64, time.Duration, error) {
	records, wait := p.Records, DefaultProbationTime
	if records < 0 {
		return 0, 0, fmt.Errorf("%w: probation.records: %d, want 0 or more", ErrInvalidJob, records)
	}
	if records == 0 {
		records = DefaultProbationRecords
	}
	if p.Time != "" {
		d, err := time.ParseDuration(p.Time)
		if err != nil || d <= 0 {
			return 0, 0, fmt.Errorf("%w: probation.time: %q is not a positive duration", ErrInvalidJob, p.Time)
		}
		wait = d
	}
	return records, wait, nil
}

// SwitchInfo answers an upgrade or a rescale: the version the job is
// switching to and the checkpoint whose barrier it takes over at. The
// switch goes on in the background; the job's versions say how it went.
type SwitchInfo struct {
	Job            string `json:"job"`
	Version        int    `json:"version"`
	FromCheckpoint int64  `json:"from_checkpoint"`
}

// UpgradeJob switches a running job to a new module or spec at the barrier
// of a checkpoint: the job stops at the barrier of a synchronous
// checkpoint, its sinks commit, and the new version restores it and runs,
// under the same job id. The new version must have the job's graph shape
// (operators, kinds, edges), its checkpoint settings and max parallelism,
// and declare every state the old modules of its keyed process operators
// declare, with the same kinds; otherwise the request is an invalid job
// naming what differs. A new version that fails during its probation is
// rolled back to the old one from the same checkpoint.
func (m *Manager) UpgradeJob(ctx context.Context, id string, req UpgradeRequest) (SwitchInfo, error) {
	old, ok := m.job(id)
	if !ok {
		return SwitchInfo{}, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	records, wait, err := req.Probation.bounds()
	if err != nil {
		return SwitchInfo{}, listProblems(err, nil)
	}
	if err := old.refuseDuringCanary(); err != nil {
		return SwitchInfo{}, err
	}
	data, pinned, err := m.upgradeSpec(ctx, old, req)
	if err != nil {
		return SwitchInfo{}, listProblems(err, nil)
	}
	if req.Canary != nil {
		return m.upgradeCanary(ctx, old, data, pinned, req.Canary, change{kind: changeCanary, records: records, wait: wait})
	}
	return m.switchVersion(ctx, old, data, pinned, change{kind: changeUpgrade, records: records, wait: wait})
}

// upgradeSpec is the new version's spec and the module references pinned
// for it: the job's spec with every module reference naming req.Module, or
// req.Spec with its references as they resolve (all naming req.Module when
// it is set too).
func (m *Manager) upgradeSpec(ctx context.Context, old *job, req UpgradeRequest) ([]byte, []JobModule, error) {
	if req.Module == "" && req.Spec == "" {
		return nil, nil, fmt.Errorf("%w: module: give the new module, a new spec, or both", ErrInvalidJob)
	}
	data := old.spec
	if req.Spec != "" {
		data = []byte(req.Spec)
	}
	if req.Module == "" {
		return data, nil, nil
	}
	mod, err := m.GetModule(ctx, req.Module)
	if errors.Is(err, ErrNotFound) {
		return nil, nil, fmt.Errorf("%w: module: no module %q (platform module list shows them)", ErrInvalidJob, req.Module)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: module: %w", ErrInvalidJob, err)
	}
	var refs []string
	if req.Spec == "" {
		ids := map[string]bool{}
		for _, r := range old.refs {
			ids[r.ID] = true
			refs = append(refs, r.Ref)
		}
		if len(ids) > 1 {
			return nil, nil, fmt.Errorf("%w: module: the job runs %d modules; give a spec that names the new ones", ErrInvalidJob, len(ids))
		}
	} else {
		js, err := spec.Parse(data)
		if err != nil {
			return nil, nil, err
		}
		walkModuleRefs(reflect.ValueOf(js).Elem(), "", func(_ string, ref *string) {
			if !slices.Contains(refs, *ref) {
				refs = append(refs, *ref)
			}
		})
	}
	if len(refs) == 0 {
		return nil, nil, fmt.Errorf("%w: module: the job runs no module", ErrInvalidJob)
	}
	pinned := make([]JobModule, len(refs))
	for i, r := range refs {
		pinned[i] = JobModule{Ref: r, ID: mod.ID, Version: mod.Version}
	}
	return data, pinned, nil
}

// change is a switch's kind and its probation.
type change struct {
	kind    string
	records int64
	wait    time.Duration
}

// probation reports whether the version the change switches to is on
// probation until records or wait: not a canary's rollback, which returns
// to the version the job ran before.
func (c change) probation() bool { return c.records > 0 || c.wait > 0 }

// checkSwitch refuses a new version that cannot take over the old one's
// checkpoint: another graph, other checkpoint settings or max
// parallelism, or keyed state the new modules do not declare.
func (m *Manager) checkSwitch(old, nw *plan.Plan, data []byte) error {
	var problems []string
	problems = append(problems, sameShape(old, nw)...)
	if !reflect.DeepEqual(old.Job.Checkpoint, nw.Job.Checkpoint) {
		problems = append(problems, "checkpoint: a new version keeps the job's checkpoint settings (stop the job with a savepoint and submit it again to change them)")
	}
	if old.Job.MaxParallelism != nw.Job.MaxParallelism {
		problems = append(problems, fmt.Sprintf("max_parallelism: %d, the job's is %d: its key groups cannot change in place", nw.Job.MaxParallelism, old.Job.MaxParallelism))
	}
	problems = append(problems, m.stateProblems(old, nw)...)
	if len(problems) == 0 {
		return nil
	}
	return listProblems(fmt.Errorf("%w: %s", ErrInvalidJob, strings.Join(problems, "; ")), data)
}

// sameShape lists how nw's graph differs from old's: vertices gone, new or
// of another kind, and inputs changed.
func sameShape(old, nw *plan.Plan) []string {
	var problems []string
	for _, v := range old.Vertices {
		nv := nw.Vertex(v.ID)
		switch {
		case nv == nil:
			problems = append(problems, fmt.Sprintf("%s: %q is gone; a new version keeps the job's graph", vertexPath(old, v.ID), v.ID))
		case nv.Kind != v.Kind:
			problems = append(problems, fmt.Sprintf("%s: %q is a %s, it was a %s", vertexPath(nw, v.ID), v.ID, nv.Kind, v.Kind))
		case !slices.Equal(inputsOf(nv), inputsOf(v)):
			problems = append(problems, fmt.Sprintf("%s: %q reads %v, it read %v", vertexPath(nw, v.ID), v.ID, inputsOf(nv), inputsOf(v)))
		}
	}
	for _, v := range nw.Vertices {
		if old.Vertex(v.ID) == nil {
			problems = append(problems, fmt.Sprintf("%s: %q is new; a new version keeps the job's graph", vertexPath(nw, v.ID), v.ID))
		}
	}
	return problems
}

// inputsOf are the vertices v reads, sorted, with the side output an edge
// reads marked.
func inputsOf(v *plan.Vertex) []string {
	out := make([]string, 0, len(v.In))
	for _, e := range v.In {
		name := e.From.ID
		if e.Side != "" {
			name += " (" + e.Side + ")"
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// vertexPath is the spec field of vertex id: sources[i], operators[i] or
// sinks[i].
func vertexPath(p *plan.Plan, id string) string {
	for i, s := range p.Job.Sources {
		if s.ID == id {
			return fmt.Sprintf("sources[%d]", i)
		}
	}
	for i, o := range p.Job.Operators {
		if o.ID == id {
			return fmt.Sprintf("operators[%d]", i)
		}
	}
	for i, s := range p.Job.Sinks {
		if s.ID == id {
			return fmt.Sprintf("sinks[%d]", i)
		}
	}
	return "operators"
}

// stateProblems lists the states a keyed process operator's old module
// declares that its new module does not, or declares with another kind:
// the snapshot's state of that name would be dropped or refused. A new
// module that renames or retypes a state declares the old one retired and
// converts it in its migrate_state function (abi/migrate.go); the old
// module's own retired states were emptied at its restore and need no
// heir.
func (m *Manager) stateProblems(old, nw *plan.Plan) []string {
	var problems []string
	for _, v := range nw.Vertices {
		ov := old.Vertex(v.ID)
		if v.Kind != "process" || v.Fn == nil || ov == nil || ov.Fn == nil || ov.Fn.Module == v.Fn.Module {
			continue
		}
		od, _ := m.lookupDescription(ov.Fn.Module)
		nd, _ := m.lookupDescription(v.Fn.Module)
		for _, st := range od.States {
			if st.Retired {
				continue
			}
			i := nd.LookupState(st.Name)
			switch {
			case i < 0:
				problems = append(problems, fmt.Sprintf("%s.process: the new module declares no state %q (a %s state of the running module, renamed or removed): its state would be lost; to rename or retype it, declare it retired and convert it in a migrate_state function", vertexPath(nw, v.ID), st.Name, st.Kind))
			case nd.States[i].Kind != st.Kind:
				problems = append(problems, fmt.Sprintf("%s.process: state %q is a %s state in the new module, a %s state in the running one; to retype it, give the new state another name, declare %q retired and convert it in a migrate_state function", vertexPath(nw, v.ID), st.Name, nd.States[i].Kind, st.Kind, st.Name))
			}
		}
	}
	return problems
}
