package runtime

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/runtime/exec"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/runtime/spec"
)

// JobPlan is what a job would run: ValidateJob's answer.
type JobPlan struct {
	Name string `json:"name"`
	// Tasks counts the subtasks that would run: each chain's head times its
	// parallelism.
	Tasks    int          `json:"tasks"`
	Vertices []PlanVertex `json:"vertices"`
	Edges    []EdgeInfo   `json:"edges,omitempty"`
	Modules  []string     `json:"modules,omitempty"`
	Warnings []string     `json:"warnings,omitempty"`
}

// PlanVertex is one vertex of a planned job.
type PlanVertex struct {
	ID          string `json:"id"`
	Kind        string `json:"kind"`
	Parallelism int    `json:"parallelism"`
	// Task names the task the vertex is chained into: its chain's head.
	Task string `json:"task"`
}

// ValidateJob runs every check SubmitJob runs, from the savepoint from when
// it is set, and says what the job would run, without starting it: no job
// is kept or written to the registry, and no task or connector is made.
func (m *Manager) ValidateJob(ctx context.Context, data []byte, from string, allowNonRestored bool) (JobPlan, error) {
	p, _, _, err := m.check(ctx, data, from, allowNonRestored, nil)
	if err != nil {
		return JobPlan{}, err
	}
	var chains job // taskName needs no job's state
	jp := JobPlan{Name: p.Job.Name, Modules: p.ModuleIDs(), Warnings: m.checkpointWarnings(ctx, p)}
	for _, v := range p.Vertices {
		task := chains.taskName(v)
		if task == v.ID {
			jp.Tasks += v.Parallelism
		}
		jp.Vertices = append(jp.Vertices, PlanVertex{ID: v.ID, Kind: v.Kind, Parallelism: v.Parallelism, Task: task})
		jp.Edges = append(jp.Edges, edgeInfos(v)...)
	}
	return jp, nil
}

// check is what a submission checks before it makes the job: the spec
// parses and validates, the module names it uses have versions, its
// functions are in the uploaded modules with the right kinds, the streams
// and buckets it reads and writes exist, the streams it reads can be read again after a
// restart, and the savepoint it starts from fits. It only
// reads. Module names resolve to ids before the plan is built (pinned ones
// as a resumed job recorded them); refs says what each resolved to. An
// invalid job's error is a *JobError.
func (m *Manager) check(ctx context.Context, data []byte, from string, allowNonRestored bool, pinned []JobModule) (p *plan.Plan, cp *exec.Checkpoints, refs []JobModule, err error) {
	js, err := spec.Parse(data)
	if err != nil {
		return nil, nil, nil, err
	}
	refs, err = m.resolveSpecModules(js, pinned) // modules.go
	if err == nil {
		p, err = plan.Build(js, m.lookupDescription)
	}
	if err == nil {
		err = m.checkGuestMemory(p)
	}
	if err == nil {
		err = m.checkConnectors(ctx, p)
	}
	if err == nil {
		err = m.checkBuckets(ctx, p) // validate_buckets.go
	}
	if err == nil {
		err = m.checkSourceRetention(ctx, p) // validate_streams.go
	}
	if err == nil {
		cp, err = m.prepareCheckpoints(ctx, p, from, allowNonRestored)
	}
	if err != nil {
		return nil, nil, nil, listProblems(err, data)
	}
	return p, cp, refs, nil
}

// checkGuestMemory refuses a job whose Wasm instances, each grown to
// udf.memory_limit, would hold more than the host's memory budget: the job
// could not run at its limits on this worker even alone.
func (m *Manager) checkGuestMemory(p *plan.Plan) error {
	if m.cfg.Host == nil {
		return nil
	}
	guests, limit, budget := int64(p.Guests()), p.Job.UDF.MemoryLimit, m.cfg.Host.MemoryBudget()
	if need := guests * limit; need > budget {
		return fmt.Errorf("%w: udf.memory_limit: %d bytes x %d instances (one per module function per subtask) = %d bytes, more than the guest memory budget host.memory_budget of %d bytes; lower udf.memory_limit or the parallelism",
			ErrInvalidJob, limit, guests, need, budget)
	}
	return nil
}

// JobError is an invalid job (it wraps ErrInvalidJob) with its problems
// listed: each with the field it is about and its line in the spec, when
// known, as spec.Error lists the problems of an invalid spec.
type JobError struct {
	Problems []spec.FieldError
	err      error
}

func (e *JobError) Error() string {
	if e.err == nil {
		return ErrInvalidJob.Error() + ": " + (&spec.Error{Problems: e.Problems}).Error()
	}
	return e.err.Error()
}

// Unwrap returns the invalid-job error the problems were read from.
func (e *JobError) Unwrap() error {
	if e.err == nil {
		return ErrInvalidJob
	}
	return e.err
}

// problemStart finds where each problem of an invalid-job error begins:
// "<field path>: " at the start or after "; ".
var problemStart = regexp.MustCompile(`(?:^|; )([a-z_]+(?:\[[0-9]+\])?(?:\.[a-z_]+(?:\[[0-9]+\])?)*): `)

// listProblems turns an invalid-job error, whose text is "invalid job: "
// and its problems as "<field>: <message>" joined with "; ", into a
// *JobError, with each field's line in the spec data. Other errors pass
// unchanged.
func listProblems(err error, data []byte) error {
	var listed *JobError
	if !errors.Is(err, ErrInvalidJob) || errors.As(err, &listed) {
		return err
	}
	text := strings.TrimPrefix(err.Error(), ErrInvalidJob.Error()+": ")
	lines := spec.LinesOf(data)
	starts := problemStart.FindAllStringSubmatchIndex(text, -1)
	if len(starts) == 0 || starts[0][0] != 0 {
		// Text before the first field is a problem of the whole job.
		end := len(text)
		if len(starts) > 0 {
			end = starts[0][0]
		}
		listed = &JobError{err: err, Problems: []spec.FieldError{{Message: text[:end]}}}
	} else {
		listed = &JobError{err: err}
	}
	for i, s := range starts {
		end := len(text)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		field := text[s[2]:s[3]]
		listed.Problems = append(listed.Problems, spec.FieldError{Path: field, Message: text[s[1]:end], Line: lines.Line(field)})
	}
	return listed
}

// missingStream is the error of a source whose stream cannot be found at
// path: for a stream that does not exist, how to create it.
func missingStream(path, stream string, subjects []string, err error) error {
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("%w: %s: %q: %v", ErrInvalidJob, path, stream, err)
	}
	list := "<subjects>"
	if len(subjects) > 0 {
		list = shellWord(strings.Join(subjects, ","))
	}
	return fmt.Errorf("%w: %s: no stream %q; create it with: platform stream add %s --subjects %s",
		ErrInvalidJob, path, stream, shellWord(stream), list)
}

// noStreamFor is the error of a subject at path that no stream captures:
// for none, how to create one (named after the subject).
func noStreamFor(path, subject string, err error) error {
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("%w: %s: no stream captures %q: %v", ErrInvalidJob, path, subject, err)
	}
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, subject)
	return fmt.Errorf("%w: %s: no stream captures %q; create one with: platform stream add %s --subjects %s",
		ErrInvalidJob, path, subject, name, shellWord(subject))
}

// shellWord quotes s for a shell when it holds more than letters, digits
// and . , - _.
func shellWord(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".,-_", r)) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}
