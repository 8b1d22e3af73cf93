package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/host"
	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime/spec"
)

// TestValidateJob: a valid job is planned and nothing of it is kept; an
// invalid one fails as its submission would, with its problems listed.
func TestValidateJob(t *testing.T) {
	m, js := newJetStreamManager(t)
	ctx := context.Background()
	mod, err := m.UploadModule(ctx, wasmbuild.UDF(t, "upper-wat"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "OUT", Subjects: []string{"out"}}); err != nil {
		t.Fatal(err)
	}
	const tmpl = `name: v
parallelism: 2
sources:
  - {id: in, jetstream: {stream: %s, subjects: ["in.a", "in.b"]}}
operators:
  - id: up
    input: in
    map: {module: "%s", function: %s}
  - {id: one, input: up, parallelism: 1, filter: {module: "%s", function: upper}}
sinks:
  - {id: out, input: one, parallelism: 1, jetstream: {subject: %s}}
`
	valid := fmt.Sprintf(tmpl, "IN", mod.ID, "upper", mod.ID, "out")

	plan, err := m.ValidateJob(ctx, []byte(valid), "", false)
	if err == nil || plan.Name != "" {
		t.Fatalf("a filter named upper, which is a map: got %+v, %v", plan, err)
	}
	var je *JobError
	if !errors.As(err, &je) || !errors.Is(err, ErrInvalidJob) {
		t.Fatalf("got %T %v, want a *JobError", err, err)
	}
	want := []spec.FieldError{{Path: "operators[1].filter.function", Message: `"upper" is a map function, want filter`, Line: 9}}
	if !reflect.DeepEqual(je.Problems, want) {
		t.Errorf("problems %+v, want %+v", je.Problems, want)
	}

	valid = strings.Replace(valid, "filter: {", "map: {", 1)
	plan, err = m.ValidateJob(ctx, []byte(valid), "", false)
	if err != nil {
		t.Fatal(err)
	}
	wantPlan := JobPlan{Name: "v", Tasks: 3, Modules: []string{mod.ID},
		Vertices: []PlanVertex{{"in", "source", 2, "in"}, {"up", "map", 2, "in"}, {"one", "map", 1, "one"}, {"out", "sink", 1, "one"}},
		Edges: []EdgeInfo{{From: "in", To: "up", Ship: "forward", Chained: true}, {From: "up", To: "one", Ship: "rebalance"},
			{From: "one", To: "out", Ship: "forward", Chained: true}}}
	if !reflect.DeepEqual(plan, wantPlan) {
		t.Errorf("plan\n%+v\nwant\n%+v", plan, wantPlan)
	}
	if jobs, _ := m.ListJobs(ctx); len(jobs) != 0 {
		t.Errorf("validating kept jobs: %+v", jobs)
	}
	if recs, err := m.registry.all(ctx); err != nil || len(recs) != 0 {
		t.Errorf("validating wrote the registry: %+v %v", recs, err)
	}
	if info, _ := m.GetModule(ctx, mod.ID); len(info.UsedBy) != 0 {
		t.Errorf("module used by %v after a validation", info.UsedBy)
	}

	missing := "sha256:" + strings.Repeat("0", 64)
	for _, tc := range []struct {
		name, spec string
		want       []spec.FieldError
	}{
		{"missing module and function", fmt.Sprintf(tmpl, "IN", missing, "upper", mod.ID, "out"), []spec.FieldError{
			{Path: "operators[0].map.module", Message: "no module " + missing + " (upload it first)", Line: 8},
			{Path: "operators[1].filter.function", Message: `"upper" is a map function, want filter`, Line: 9},
		}},
		{"missing function", fmt.Sprintf(strings.Replace(tmpl, "filter: {", "map: {", 1), "IN", mod.ID, "uper", mod.ID, "out"), []spec.FieldError{
			{Path: "operators[0].map.function", Message: `module ` + mod.ID + ` has no function "uper" (it has upper (map))`, Line: 8},
		}},
		{"missing stream", fmt.Sprintf(strings.Replace(tmpl, "filter: {", "map: {", 1), "INPUT", mod.ID, "upper", mod.ID, "out"), []spec.FieldError{
			{Path: "sources[0].jetstream.stream", Message: `no stream "INPUT"; create it with: platform stream add INPUT --subjects in.a,in.b`, Line: 4},
		}},
		{"no stream captures the sink's subject", fmt.Sprintf(strings.Replace(tmpl, "filter: {", "map: {", 1), "IN", mod.ID, "upper", mod.ID, "out.words"), []spec.FieldError{
			{Path: "sinks[0].jetstream.subject", Message: `no stream captures "out.words"; create one with: platform stream add OUT_WORDS --subjects out.words`, Line: 11},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.ValidateJob(ctx, []byte(tc.spec), "", false)
			var je *JobError
			if !errors.As(err, &je) {
				t.Fatalf("got %v, want a *JobError", err)
			}
			if !reflect.DeepEqual(je.Problems, tc.want) {
				t.Errorf("problems\n%+v\nwant\n%+v", je.Problems, tc.want)
			}
			// Submitting fails the same way.
			_, serr := m.SubmitJob(ctx, []byte(tc.spec))
			if serr == nil || serr.Error() != err.Error() {
				t.Errorf("submit: %v, validate: %v", serr, err)
			}
		})
	}
}

func TestListProblems(t *testing.T) {
	data := []byte("name: j\nsources:\n  - id: s\n    generator: {kind: sequence}\n")
	for _, tc := range []struct {
		err  error
		want []spec.FieldError
	}{
		{fmt.Errorf("%w: sources[0].generator: bad; checkpoint: none here; from_savepoint: x: y", ErrInvalidJob), []spec.FieldError{
			{Path: "sources[0].generator", Message: "bad", Line: 4}, {Path: "checkpoint", Message: "none here"}, {Path: "from_savepoint", Message: "x: y"}}},
		{fmt.Errorf("%w: checkpoint.unaligned with mode at_least_once (why): not supported yet", ErrInvalidJob), []spec.FieldError{
			{Message: "checkpoint.unaligned with mode at_least_once (why): not supported yet"}}},
		{fmt.Errorf("%w: odd start; name: bad", ErrInvalidJob), []spec.FieldError{{Message: "odd start"}, {Path: "name", Message: "bad", Line: 1}}},
	} {
		var je *JobError
		if err := listProblems(tc.err, data); !errors.As(err, &je) || err.Error() != tc.err.Error() {
			t.Fatalf("%v: got %v", tc.err, err)
		}
		if !reflect.DeepEqual(je.Problems, tc.want) {
			t.Errorf("%v:\ngot  %+v\nwant %+v", tc.err, je.Problems, tc.want)
		}
	}
	other := errors.New("boom")
	if got := listProblems(other, data); got != other {
		t.Errorf("another error became %v", got)
	}
}

// TestGuestMemoryBudget: a job whose instances at udf.memory_limit would
// hold more than the host's memory budget is refused, naming the numbers;
// one that fits exactly is accepted.
func TestGuestMemoryBudget(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, host.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), MemoryBudget: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(ctx) })
	m, err := NewManager(ctx, Config{DataDir: t.TempDir(), Host: h, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(ctx) })
	mod, err := m.UploadModule(ctx, wasmbuild.UDF(t, "upper-wat"))
	if err != nil {
		t.Fatal(err)
	}
	const tmpl = `name: big
parallelism: %d
udf:
  memory_limit: 268435456
sources: [{id: gen, generator: {kind: sequence, count: 10}}]
operators:
  - {id: a, input: gen, map: {module: "%s", function: upper}}
  - {id: b, input: a, map: {module: "%s", function: upper}}
sinks: [{id: out, input: b, discard: true}]
`
	_, err = m.SubmitJob(ctx, []byte(fmt.Sprintf(tmpl, 3, mod.ID, mod.ID)))
	var je *JobError
	if !errors.As(err, &je) || !errors.Is(err, ErrInvalidJob) {
		t.Fatalf("got %T %v, want a *JobError", err, err)
	}
	want := []spec.FieldError{{Path: "udf.memory_limit", Line: 4,
		Message: "268435456 bytes x 6 instances (one per module function per subtask) = 1610612736 bytes, more than the guest memory budget host.memory_budget of 1073741824 bytes; lower udf.memory_limit or the parallelism"}}
	if !reflect.DeepEqual(je.Problems, want) {
		t.Fatalf("problems %+v, want %+v", je.Problems, want)
	}
	if jobs, _ := m.ListJobs(ctx); len(jobs) != 0 {
		t.Fatalf("a refused job was kept: %+v", jobs)
	}
	if _, err := m.ValidateJob(ctx, []byte(fmt.Sprintf(tmpl, 2, mod.ID, mod.ID)), "", false); err != nil {
		t.Fatalf("4 instances of 256 MiB in a budget of 1 GiB: %v", err)
	}
}
