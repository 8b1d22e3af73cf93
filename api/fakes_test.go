package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime"
)

var (
	t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	t1 = time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC)
)

// fakeModules keeps modules in a map; a module's id is the hex of its bytes.
type fakeModules struct {
	mods      map[string]runtime.ModuleInfo
	uploadErr error
	listErr   error
	uploaded  [][]byte
	// named are the names of the named uploads.
	named []string
}

func (f *fakeModules) UploadModule(_ context.Context, wasm []byte) (runtime.ModuleInfo, error) {
	if f.uploadErr != nil {
		return runtime.ModuleInfo{}, f.uploadErr
	}
	f.uploaded = append(f.uploaded, wasm)
	info := runtime.ModuleInfo{
		ID:        fmt.Sprintf("sha256:%x", wasm),
		Size:      len(wasm),
		Functions: []abi.Function{{Name: "parse", Kind: abi.KindMap}},
		Uploaded:  t0,
	}
	f.mods[info.ID] = info
	return info, nil
}

// UploadNamedModule uploads as UploadModule does and makes the module
// version 1 of the name.
func (f *fakeModules) UploadNamedModule(ctx context.Context, wasm []byte, name string) (runtime.ModuleInfo, error) {
	info, err := f.UploadModule(ctx, wasm)
	if err != nil {
		return info, err
	}
	f.named = append(f.named, name)
	info.Names, info.Version = []string{name + "@1"}, name+"@1"
	f.mods[info.ID] = info
	return info, nil
}

func (f *fakeModules) ListModules(context.Context) ([]runtime.ModuleInfo, error) {
	if f.listErr != nil {
		return nil, f.listErr
	}
	var out []runtime.ModuleInfo
	for _, m := range f.mods {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b runtime.ModuleInfo) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func (f *fakeModules) GetModule(_ context.Context, id string) (runtime.ModuleInfo, error) {
	m, ok := f.mods[id]
	if !ok {
		return runtime.ModuleInfo{}, fmt.Errorf("module %s: %w", id, runtime.ErrNotFound)
	}
	return m, nil
}

func (f *fakeModules) DeleteModule(_ context.Context, id string) error {
	m, ok := f.mods[id]
	switch {
	case !ok:
		return fmt.Errorf("module %s: %w", id, runtime.ErrNotFound)
	case len(m.UsedBy) > 0:
		return fmt.Errorf("module %s used by jobs %s: %w", id, strings.Join(m.UsedBy, ", "), runtime.ErrInUse)
	}
	delete(f.mods, id)
	return nil
}

// fakeJobs keeps jobs in a map; every submitted job is "job-new".
type fakeJobs struct {
	jobs      map[string]runtime.JobInfo
	submitErr error
	listErr   error
	submitted [][]byte
	// validated records the dry runs: spec, from and allow.
	validated []string
	// deleted records the deletions: id and savepoints.
	deleted []string
}

func (f *fakeJobs) SubmitJob(_ context.Context, spec []byte) (runtime.JobInfo, error) {
	if f.submitErr != nil {
		return runtime.JobInfo{}, f.submitErr
	}
	f.submitted = append(f.submitted, spec)
	info := runtime.JobInfo{ID: "job-new", Name: "demo", State: runtime.StateCreated, Created: t0}
	f.jobs[info.ID] = info
	return info, nil
}

// ValidateJob fails as SubmitJob would, else plans a one-vertex job.
func (f *fakeJobs) ValidateJob(_ context.Context, spec []byte, from string, allow bool) (runtime.JobPlan, error) {
	if f.submitErr != nil {
		return runtime.JobPlan{}, f.submitErr
	}
	f.validated = append(f.validated, fmt.Sprintf("%s from=%q allow=%v", spec, from, allow))
	return runtime.JobPlan{Name: "demo", Tasks: 2, Vertices: []runtime.PlanVertex{{ID: "gen", Kind: "source", Parallelism: 2, Task: "gen"}}}, nil
}

func (f *fakeJobs) ListJobs(context.Context) ([]runtime.JobInfo, error) {
	if f.listErr != nil {
		return nil, f.listErr
	}
	var out []runtime.JobInfo
	for _, j := range f.jobs {
		out = append(out, j)
	}
	slices.SortFunc(out, func(a, b runtime.JobInfo) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func (f *fakeJobs) GetJob(_ context.Context, id string) (runtime.JobInfo, error) {
	j, ok := f.jobs[id]
	if !ok {
		return runtime.JobInfo{}, fmt.Errorf("job %s: %w", id, runtime.ErrNotFound)
	}
	return j, nil
}

func (f *fakeJobs) CancelJob(_ context.Context, id string) (runtime.JobInfo, error) {
	j, ok := f.jobs[id]
	switch {
	case !ok:
		return runtime.JobInfo{}, fmt.Errorf("job %s: %w", id, runtime.ErrNotFound)
	case j.State.Terminal():
		return runtime.JobInfo{}, fmt.Errorf("job %s is %s: %w", id, j.State, runtime.ErrFinished)
	}
	j.State = runtime.StateCancelling
	f.jobs[id] = j
	return j, nil
}

// JobSpec answers with a spec naming the job, in JSON for job-2.
func (f *fakeJobs) JobSpec(_ context.Context, id string) ([]byte, string, error) {
	j, ok := f.jobs[id]
	switch {
	case !ok:
		return nil, "", fmt.Errorf("job %s: %w", id, runtime.ErrNotFound)
	case id == "job-2":
		return []byte(`{"name": "` + j.Name + `"}` + "\n"), "application/json", nil
	}
	return []byte("name: " + j.Name + "\n"), "application/yaml", nil
}

// DeleteJob deletes an ended job and records what it was asked.
func (f *fakeJobs) DeleteJob(_ context.Context, id string, savepoints bool) error {
	j, ok := f.jobs[id]
	switch {
	case !ok:
		return fmt.Errorf("job %s: %w", id, runtime.ErrNotFound)
	case !j.State.Terminal():
		return fmt.Errorf("job %s is %s; cancel or stop it first: %w", id, j.State, runtime.ErrNotEnded)
	}
	delete(f.jobs, id)
	f.deleted = append(f.deleted, fmt.Sprintf("%s savepoints=%v", id, savepoints))
	return nil
}

func (f *fakeJobs) Backpressure(_ context.Context, id string) (runtime.BackpressureInfo, error) {
	j, ok := f.jobs[id]
	if !ok {
		return runtime.BackpressureInfo{}, fmt.Errorf("job %s: %w", id, runtime.ErrNotFound)
	}
	return runtime.BackpressureInfo{Job: id, State: j.State, IntervalMS: 1000, Vertices: []runtime.VertexBackpressure{{
		ID: "parse", Task: "parse", Level: runtime.LevelHigh, Ratio: 0.9,
		Subtasks: []runtime.SubtaskBackpressure{{Subtask: 0, Level: runtime.LevelHigh, Ratio: 0.9, IdleRatio: 0, BusyRatio: 0.1, VertexBusyRatio: 0.1}},
	}}}, nil
}

// validationError stands for the host's module validation error.
type validationError struct{ problems []string }

func (e *validationError) Error() string                { return strings.Join(e.problems, "; ") }
func (e *validationError) ValidationProblems() []string { return e.problems }

// fixtures returns a free module, a module job-1 uses, a running job-1 and
// a finished job-2.
func fixtures() (*fakeModules, *fakeJobs) {
	mods := &fakeModules{mods: map[string]runtime.ModuleInfo{
		"sha256:0061736d": {ID: "sha256:0061736d", Size: 4, Uploaded: t0,
			Functions: []abi.Function{{Name: "parse", Kind: abi.KindMap}}},
		"sha256:00ff": {ID: "sha256:00ff", Size: 2, Uploaded: t0, UsedBy: []string{"job-1"},
			Functions: []abi.Function{{Name: "keep", Kind: abi.KindFilter}}},
	}}
	wm := int64(1700)
	jobs := &fakeJobs{jobs: map[string]runtime.JobInfo{
		"job-1": {ID: "job-1", Name: "clicks", State: runtime.StateRunning, Created: t0,
			Vertices: []runtime.VertexInfo{{ID: "parse", Kind: "map", Parallelism: 2, Task: "t0",
				RecordsIn: 10, RecordsOut: 9, Backpressure: 0.5, Watermark: &wm}}},
		"job-2": {ID: "job-2", Name: "done", State: runtime.StateFinished, Created: t0, Ended: &t1},
	}}
	return mods, jobs
}

// testLogger writes to the test's output, shown when it fails.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

// request is one HTTP request a test sends.
type request struct {
	method, target, body string
	header               map[string]string
	// length is the Content-Length to claim instead of the body's: -1 for
	// unknown, 0 for the body's own.
	length int64
}

func (rq request) do(h http.Handler) *httptest.ResponseRecorder {
	req := httptest.NewRequest(rq.method, rq.target, strings.NewReader(rq.body))
	for k, v := range rq.header {
		req.Header.Set(k, v)
	}
	if rq.length != 0 {
		req.ContentLength = rq.length
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// response is what a test expects back. A header mapped to "" must be absent;
// body is the exact body without its final newline, "" for none.
type response struct {
	status int
	header map[string]string
	body   string
}

func (want response) check(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != want.status {
		t.Errorf("status = %d, want %d (body %q)", rec.Code, want.status, rec.Body.String())
	}
	for k, v := range want.header {
		if got := rec.Header().Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	wantBody := want.body
	if wantBody != "" {
		wantBody += "\n"
	}
	if got := rec.Body.String(); got != wantBody {
		t.Errorf("body =\n%s\nwant\n%s", got, wantBody)
	}
}

const (
	jsonType    = "application/json"
	problemType = "application/problem+json"
)
