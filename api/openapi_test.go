package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/runtime"
	"wasmstream.io/platform/runtime/replay"
	"wasmstream.io/platform/runtime/spec"
)

// scripted answers by id: "ok" exists, "busy" is a module in use, "done" a
// finished job, "nocp" a job without checkpoints, "boom" fails with an
// error the API does not know; anything else is not found. A spec body
// names what submitting it does: "bad-spec", "bad-job" or "boom".
type scripted struct{}

func (scripted) answer(id string) error {
	switch id {
	case "ok":
		return nil
	case "busy":
		return runtime.ErrInUse
	case "done":
		return runtime.ErrFinished
	case "nocp":
		return runtime.ErrNoCheckpoints
	case "boom":
		return errors.New("boom")
	case "live":
		return runtime.ErrNotEnded
	case "spin":
		return runtime.ErrSavepointInUse
	case "switching":
		return runtime.ErrSwitchInProgress
	case "plain":
		return runtime.ErrNoCanary
	case "Bad":
		return fmt.Errorf("%w %q", runtime.ErrInvalidModuleName, id)
	}
	return fmt.Errorf("%s: %w", id, runtime.ErrNotFound)
}

func (s scripted) submit(body []byte) error {
	switch string(body) {
	case "bad-spec":
		return &spec.Error{Problems: []spec.FieldError{{Path: "name", Message: "required"}}}
	case "bad-job":
		return fmt.Errorf("%w: operators[0].map.module: no module", runtime.ErrInvalidJob)
	case "bad-module":
		return &validationError{problems: []string{"not a module"}}
	case "boom":
		return errors.New("boom")
	}
	return nil
}

func (s scripted) UploadModule(_ context.Context, wasm []byte) (runtime.ModuleInfo, error) {
	return runtime.ModuleInfo{ID: "ok"}, s.submit(wasm)
}
func (s scripted) UploadNamedModule(_ context.Context, wasm []byte, _ string) (runtime.ModuleInfo, error) {
	return runtime.ModuleInfo{ID: "ok"}, s.submit(wasm)
}
func (s scripted) ListModules(context.Context) ([]runtime.ModuleInfo, error) { return nil, nil }
func (s scripted) GetModule(_ context.Context, id string) (runtime.ModuleInfo, error) {
	return runtime.ModuleInfo{ID: id}, s.answer(id)
}
func (s scripted) DeleteModule(_ context.Context, id string) error { return s.answer(id) }
func (s scripted) SubmitJob(_ context.Context, b []byte) (runtime.JobInfo, error) {
	return runtime.JobInfo{ID: "ok"}, s.submit(b)
}
func (s scripted) ValidateJob(_ context.Context, b []byte, _ string, _ bool) (runtime.JobPlan, error) {
	return runtime.JobPlan{Name: "ok"}, s.submit(b)
}
func (s scripted) ListJobs(context.Context) ([]runtime.JobInfo, error) { return nil, nil }
func (s scripted) GetJob(_ context.Context, id string) (runtime.JobInfo, error) {
	return runtime.JobInfo{ID: id}, s.answer(id)
}
func (s scripted) CancelJob(_ context.Context, id string) (runtime.JobInfo, error) {
	return runtime.JobInfo{ID: id}, s.answer(id)
}
func (s scripted) JobSpec(_ context.Context, id string) ([]byte, string, error) {
	return []byte("name: ok\n"), "application/yaml", s.answer(id)
}
func (s scripted) DeleteJob(_ context.Context, id string, _ bool) error { return s.answer(id) }
func (s scripted) DeleteSavepoint(_ context.Context, id, savepoint string) error {
	if err := s.answer(id); err != nil {
		return err
	}
	return s.answer(savepoint)
}
func (s scripted) Backpressure(_ context.Context, id string) (runtime.BackpressureInfo, error) {
	return runtime.BackpressureInfo{Job: id}, s.answer(id)
}
func (s scripted) SubmitJobFromSavepoint(_ context.Context, b []byte, _ string, _ bool) (runtime.JobInfo, error) {
	return runtime.JobInfo{ID: "ok"}, s.submit(b)
}
func (s scripted) Checkpoints(_ context.Context, id string) ([]checkpoint.Stats, error) {
	return nil, s.answer(id)
}
func (s scripted) TriggerSavepoint(_ context.Context, id string) (runtime.SavepointInfo, error) {
	return runtime.SavepointInfo{ID: id}, s.answer(id)
}
func (s scripted) Savepoints(_ context.Context, id string) ([]runtime.SavepointInfo, error) {
	return nil, s.answer(id)
}
func (s scripted) ReplayKey(_ context.Context, id string, _ replay.Request, report func(replay.Event) error) error {
	if err := s.answer(id); err != nil {
		return err
	}
	return report(replay.Event{Event: replay.EventEnd})
}
func (s scripted) StopJob(_ context.Context, id string) (runtime.SavepointInfo, error) {
	return runtime.SavepointInfo{ID: id}, s.answer(id)
}

// openAPIDoc is the part of an OpenAPI document the tests read.
type openAPIDoc struct {
	OpenAPI string `json:"openapi"`
	Paths   map[string]map[string]struct {
		OperationID string                     `json:"operationId"`
		Responses   map[string]json.RawMessage `json:"responses"`
	} `json:"paths"`
}

func fetchOpenAPI(t *testing.T, h http.Handler) openAPIDoc {
	t.Helper()
	rec := request{method: "GET", target: "/v1/openapi.json"}.do(h)
	if rec.Code != 200 || rec.Header().Get("Content-Type") != jsonType {
		t.Fatalf("GET /v1/openapi.json: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	var doc openAPIDoc
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// operations lists a document's "METHOD path" pairs, sorted.
func (d openAPIDoc) operations() []string {
	var out []string
	for path, ops := range d.Paths {
		for method := range ops {
			out = append(out, strings.ToUpper(method)+" "+path)
		}
	}
	sort.Strings(out)
	return out
}

// TestOpenAPIRoutes: the document lists exactly the routes the server
// serves, which are those of docs/API.md's table but the web UI, each of
// its paths reaches a handler, and a server without checkpoints documents
// none of their routes.
func TestOpenAPIRoutes(t *testing.T) {
	h := New(Config{Modules: scripted{}, Jobs: scripted{}, Checkpoints: scripted{}, Logger: testLogger(t)})
	doc := fetchOpenAPI(t, h)
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q", doc.OpenAPI)
	}
	got := doc.operations()
	var want []string
	for _, rt := range (&server{}).routes(nil) {
		want = append(want, rt.method+" "+rt.path)
	}
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("documented\n%s\nrouted\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	data, err := os.ReadFile(filepath.Join("..", "docs", "API.md"))
	if err != nil {
		t.Fatal(err)
	}
	var inDoc []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Z]+) (/[^`]*)` \\|").FindAllStringSubmatch(string(data), -1) {
		if m[2] != "/" {
			inDoc = append(inDoc, m[1]+" "+m[2])
		}
	}
	sort.Strings(inDoc)
	if !slices.Equal(inDoc, want) {
		t.Errorf("docs/API.md lists\n%s\nthe routes are\n%s", strings.Join(inDoc, "\n"), strings.Join(want, "\n"))
	}
	for _, op := range got {
		method, path, _ := strings.Cut(op, " ")
		target := strings.ReplaceAll(strings.ReplaceAll(path, "{id}", "ok"), "{savepoint}", "ok")
		rec := request{method: method, target: target, body: "spec", header: map[string]string{"Content-Type": "application/wasm"}}.do(h)
		if strings.Contains(rec.Body.String(), `"detail":"no route for`) || rec.Code == http.StatusMethodNotAllowed {
			t.Errorf("%s: the mux has no such route: %d %s", op, rec.Code, rec.Body)
		}
	}

	bare := fetchOpenAPI(t, New(Config{Modules: scripted{}, Jobs: scripted{}, Logger: testLogger(t)}))
	for _, op := range bare.operations() {
		if strings.Contains(op, "checkpoints") || strings.Contains(op, "savepoints") || strings.HasSuffix(op, "/stop") || strings.HasSuffix(op, "/upgrade") || strings.HasSuffix(op, "/rescale") ||
			strings.HasSuffix(op, "/promote") || strings.HasSuffix(op, "/rollback") {
			t.Errorf("a server without checkpoints documents %s", op)
		}
	}
	if len(bare.operations()) != len(got)-9 {
		t.Errorf("without checkpoints: %d operations, want %d", len(bare.operations()), len(got)-9)
	}
}

// TestOpenAPIStatuses sends requests that make each route answer each
// status its operation documents: every documented status happens, and
// every answer seen is documented.
func TestOpenAPIStatuses(t *testing.T) {
	type probe struct {
		op, method, target, body, contentType string
		token                                 bool // sent to a server with a token, without one
		notReady, largeBody                   bool
		// remote: in cluster mode, about a job on a worker that does
		// not answer.
		remote bool
	}
	wasm, yaml := "application/wasm", "application/yaml"
	probes := []probe{
		{op: "uploadModule", method: "POST", target: "/v1/modules", body: "ok", contentType: wasm},
		{op: "uploadModule", method: "POST", target: "/v1/modules", contentType: wasm},
		{op: "uploadModule", method: "POST", target: "/v1/modules", body: "bad-module", contentType: wasm},
		{op: "uploadModule", method: "POST", target: "/v1/modules", body: "ok", contentType: wasm, largeBody: true},
		{op: "uploadModule", method: "POST", target: "/v1/modules", body: "ok", contentType: "text/plain"},
		{op: "uploadModule", method: "POST", target: "/v1/modules", body: "ok", contentType: wasm, token: true},
		{op: "uploadModule", method: "POST", target: "/v1/modules?name=words", body: "ok", contentType: wasm},
		{op: "uploadModule", method: "POST", target: "/v1/modules?name=Words", body: "ok", contentType: wasm},
		{op: "listModules", method: "GET", target: "/v1/modules"},
		{op: "listModules", method: "GET", target: "/v1/modules", token: true},
		{op: "getModule", method: "GET", target: "/v1/modules/ok"},
		{op: "getModule", method: "GET", target: "/v1/modules/nope"},
		{op: "getModule", method: "GET", target: "/v1/modules/ok", token: true},
		{op: "getModule", method: "GET", target: "/v1/modules/boom"},
		{op: "getModule", method: "GET", target: "/v1/modules/Bad"},
		{op: "deleteModule", method: "DELETE", target: "/v1/modules/Bad"},
		{op: "deleteModule", method: "DELETE", target: "/v1/modules/ok"},
		{op: "deleteModule", method: "DELETE", target: "/v1/modules/nope"},
		{op: "deleteModule", method: "DELETE", target: "/v1/modules/busy"},
		{op: "deleteModule", method: "DELETE", target: "/v1/modules/ok", token: true},
		{op: "submitJob", method: "POST", target: "/v1/jobs", body: "ok", contentType: yaml},
		{op: "submitJob", method: "POST", target: "/v1/jobs?dry_run=true", body: "ok", contentType: yaml},
		{op: "submitJob", method: "POST", target: "/v1/jobs", contentType: yaml},
		{op: "submitJob", method: "POST", target: "/v1/jobs", body: "bad-spec", contentType: yaml},
		{op: "submitJob", method: "POST", target: "/v1/jobs?dry_run=true", body: "bad-job", contentType: yaml},
		{op: "submitJob", method: "POST", target: "/v1/jobs", body: "ok", contentType: yaml, largeBody: true},
		{op: "submitJob", method: "POST", target: "/v1/jobs", body: "ok", contentType: wasm},
		{op: "submitJob", method: "POST", target: "/v1/jobs", body: "ok", contentType: yaml, token: true},
		{op: "listJobs", method: "GET", target: "/v1/jobs"},
		{op: "listJobs", method: "GET", target: "/v1/jobs", token: true},
		{op: "getJob", method: "GET", target: "/v1/jobs/ok"},
		{op: "getJob", method: "GET", target: "/v1/jobs/nope"},
		{op: "getJob", method: "GET", target: "/v1/jobs/ok", token: true},
		{op: "cancelJob", method: "POST", target: "/v1/jobs/ok/cancel"},
		{op: "cancelJob", method: "POST", target: "/v1/jobs/nope/cancel"},
		{op: "cancelJob", method: "POST", target: "/v1/jobs/done/cancel"},
		{op: "cancelJob", method: "POST", target: "/v1/jobs/ok/cancel", token: true},
		{op: "listQuarantine", method: "GET", target: "/v1/jobs/ok/quarantine"},
		{op: "listQuarantine", method: "GET", target: "/v1/jobs/nope/quarantine"},
		{op: "listQuarantine", method: "GET", target: "/v1/jobs/done/quarantine"},
		{op: "listQuarantine", method: "GET", target: "/v1/jobs/ok/quarantine", token: true},
		{op: "releaseQuarantine", method: "POST", target: "/v1/jobs/ok/quarantine/bad/release"},
		{op: "releaseQuarantine", method: "POST", target: "/v1/jobs/ok/quarantine/good/release"},
		{op: "releaseQuarantine", method: "POST", target: "/v1/jobs/done/quarantine/bad/release"},
		{op: "releaseQuarantine", method: "POST", target: "/v1/jobs/ok/quarantine/bad/release?key_encoding=hex"},
		{op: "releaseQuarantine", method: "POST", target: "/v1/jobs/ok/quarantine/bad/release", token: true},
		{op: "getJobExceptions", method: "GET", target: "/v1/jobs/ok/exceptions"},
		{op: "getJobExceptions", method: "GET", target: "/v1/jobs/nope/exceptions"},
		{op: "getJobExceptions", method: "GET", target: "/v1/jobs/ok/exceptions", token: true},
		{op: "getBackpressure", method: "GET", target: "/v1/jobs/ok/backpressure"},
		{op: "getBackpressure", method: "GET", target: "/v1/jobs/nope/backpressure"},
		{op: "getBackpressure", method: "GET", target: "/v1/jobs/ok/backpressure", token: true},
		{op: "deleteJob", method: "DELETE", target: "/v1/jobs/ok"},
		{op: "deleteJob", method: "DELETE", target: "/v1/jobs/ok?savepoints=true"},
		{op: "deleteJob", method: "DELETE", target: "/v1/jobs/ok?savepoints=maybe"},
		{op: "deleteJob", method: "DELETE", target: "/v1/jobs/nope"},
		{op: "deleteJob", method: "DELETE", target: "/v1/jobs/live"},
		{op: "deleteJob", method: "DELETE", target: "/v1/jobs/ok", token: true},
		{op: "getJobSpec", method: "GET", target: "/v1/jobs/ok/spec"},
		{op: "getJobSpec", method: "GET", target: "/v1/jobs/nope/spec"},
		{op: "getJobSpec", method: "GET", target: "/v1/jobs/ok/spec", token: true},
		{op: "deleteSavepoint", method: "DELETE", target: "/v1/jobs/ok/savepoints/ok"},
		{op: "deleteSavepoint", method: "DELETE", target: "/v1/jobs/ok/savepoints/nope"},
		{op: "deleteSavepoint", method: "DELETE", target: "/v1/jobs/nocp/savepoints/ok"},
		{op: "deleteSavepoint", method: "DELETE", target: "/v1/jobs/ok/savepoints/spin"},
		{op: "deleteSavepoint", method: "DELETE", target: "/v1/jobs/ok/savepoints/ok", token: true},
		{op: "getSample", method: "GET", target: "/v1/jobs/ok/sample?sink=out"},
		{op: "getSample", method: "GET", target: "/v1/jobs/nope/sample"},
		{op: "getSample", method: "GET", target: "/v1/jobs/ok/sample?sink=nope"},
		{op: "getSample", method: "GET", target: "/v1/jobs/ok/sample", token: true},
		{op: "replayKey", method: "POST", target: "/v1/jobs/ok/replay", body: `{"checkpoint": 1, "key": "k"}`, contentType: "application/json"},
		{op: "replayKey", method: "POST", target: "/v1/jobs/nope/replay", body: `{"checkpoint": 1, "key": "k"}`, contentType: "application/json"},
		{op: "replayKey", method: "POST", target: "/v1/jobs/ok/replay", body: `{"checkpoint": "one"}`, contentType: "application/json"},
		{op: "replayKey", method: "POST", target: "/v1/jobs/ok/replay", body: `{"checkpoint": 1, "key": "k"}`, contentType: "application/json", largeBody: true},
		{op: "replayKey", method: "POST", target: "/v1/jobs/ok/replay", body: `{"checkpoint": 1, "key": "k"}`, contentType: wasm},
		{op: "replayKey", method: "POST", target: "/v1/jobs/ok/replay", body: `{"checkpoint": 1, "key": "k"}`, contentType: "application/json", token: true},
	}
	for _, cp := range []struct{ op, method, path string }{
		{"listCheckpoints", "GET", "checkpoints"}, {"triggerSavepoint", "POST", "savepoints"},
		{"listSavepoints", "GET", "savepoints"}, {"stopJob", "POST", "stop"},
	} {
		for _, id := range []string{"ok", "nope", "nocp"} {
			probes = append(probes, probe{op: cp.op, method: cp.method, target: "/v1/jobs/" + id + "/" + cp.path})
		}
		probes = append(probes, probe{op: cp.op, method: cp.method, target: "/v1/jobs/ok/" + cp.path, token: true})
	}
	for _, op := range []struct{ op, path, body string }{{"upgradeJob", "upgrade", `{"module":"m"}`}, {"rescaleJob", "rescale", `{"parallelism":2}`}} {
		for _, id := range []string{"ok", "nope", "nocp", "switching"} {
			probes = append(probes, probe{op: op.op, method: "POST", target: "/v1/jobs/" + id + "/" + op.path, body: op.body, contentType: "application/json"})
		}
		probes = append(probes,
			probe{op: op.op, method: "POST", target: "/v1/jobs/ok/" + op.path, body: `{"nope":1}`, contentType: "application/json"},
			probe{op: op.op, method: "POST", target: "/v1/jobs/ok/" + op.path, body: `{"module":"bad-job"}`, contentType: "application/json"},
			probe{op: op.op, method: "POST", target: "/v1/jobs/ok/" + op.path, body: op.body, contentType: "application/json", largeBody: true},
			probe{op: op.op, method: "POST", target: "/v1/jobs/ok/" + op.path, body: op.body, contentType: yaml},
			probe{op: op.op, method: "POST", target: "/v1/jobs/ok/" + op.path, body: op.body, contentType: "application/json", token: true})
	}
	for _, id := range []string{"ok", "nope", "nocp", "switching", "plain"} {
		probes = append(probes,
			probe{op: "promoteJob", method: "POST", target: "/v1/jobs/" + id + "/promote"},
			probe{op: "rollbackJob", method: "POST", target: "/v1/jobs/" + id + "/rollback"})
	}
	probes = append(probes,
		probe{op: "promoteJob", method: "POST", target: "/v1/jobs/ok/promote", body: `{"nope":1}`, contentType: "application/json"},
		probe{op: "promoteJob", method: "POST", target: "/v1/jobs/ok/promote", body: `{"probation":{}}`, contentType: "application/json", largeBody: true},
		probe{op: "promoteJob", method: "POST", target: "/v1/jobs/ok/promote", body: `{"probation":{}}`, contentType: yaml},
		probe{op: "promoteJob", method: "POST", target: "/v1/jobs/ok/promote", token: true},
		probe{op: "rollbackJob", method: "POST", target: "/v1/jobs/ok/rollback", token: true})
	for _, p := range probes {
		if strings.HasPrefix(p.target, "/v1/jobs/ok") || (p.op == "submitJob" && p.body == "ok" && !p.token && !p.largeBody && p.contentType == yaml && !strings.Contains(p.target, "dry_run")) {
			if !p.token {
				p.remote = true
				probes = append(probes, p)
			}
		}
	}
	probes = append(probes,
		probe{op: "listWorkers", method: "GET", target: "/v1/workers"},
		probe{op: "listWorkers", method: "GET", target: "/v1/workers", token: true},
		probe{op: "getOpenAPI", method: "GET", target: "/v1/openapi.json"},
		probe{op: "getOpenAPI", method: "GET", target: "/v1/openapi.json", token: true},
		probe{op: "getJobSchema", method: "GET", target: "/v1/schema/job"},
		probe{op: "getJobSchema", method: "GET", target: "/v1/schema/job", token: true},
		probe{op: "getMetrics", method: "GET", target: "/metrics"},
		probe{op: "getHealth", method: "GET", target: "/healthz"},
		probe{op: "getReadiness", method: "GET", target: "/readyz"},
		probe{op: "getReadiness", method: "GET", target: "/readyz", notReady: true},
	)

	doc := fetchOpenAPI(t, New(Config{Modules: scripted{}, Jobs: scripted{}, Checkpoints: scripted{}, Logger: testLogger(t)}))
	documented := map[string][]string{}
	for _, ops := range doc.Paths {
		for _, o := range ops {
			for status := range o.Responses {
				documented[o.OperationID] = append(documented[o.OperationID], status)
			}
		}
	}
	seen := map[string]bool{}
	for _, p := range probes {
		cfg := Config{Modules: scripted{}, Jobs: scripted{}, Checkpoints: scripted{}, Logger: testLogger(t),
			Metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("m 1\n")) })}
		if p.token {
			cfg.Token = "t"
		}
		if p.notReady {
			cfg.Ready = func() error { return errors.New("not yet") }
		}
		if p.remote {
			cfg.Cluster = deadWorker{}
		}
		if p.largeBody {
			cfg.MaxModuleSize, cfg.MaxSpecSize = 1, 1
		}
		header := map[string]string{}
		if p.contentType != "" {
			header["Content-Type"] = p.contentType
		}
		rec := request{method: p.method, target: p.target, body: p.body, header: header}.do(New(cfg))
		status := strconv.Itoa(rec.Code)
		if !slices.Contains(documented[p.op], status) && !(rec.Code >= 500 && slices.Contains(documented[p.op], "default")) {
			t.Errorf("%s %s answers %s, which %s does not document (%v): %s", p.method, p.target, status, p.op, documented[p.op], rec.Body)
		}
		seen[p.op+" "+status] = true
	}
	for op, statuses := range documented {
		if !slices.Contains(statuses, "default") {
			t.Errorf("%s documents no default answer (500)", op)
		}
		for _, s := range statuses {
			if s != "default" && !seen[op+" "+s] {
				t.Errorf("%s documents %s, which no probe makes it answer", op, s)
			}
		}
	}
}

// deadWorker is a cluster whose every job, and every new job, belongs to a
// worker that does not answer.
type deadWorker struct{}

func (deadWorker) Workers(context.Context) ([]runtime.WorkerInfo, error) { return nil, nil }
func (deadWorker) JobOwner(string) (string, bool)                        { return "http://127.0.0.1:1", true }
func (deadWorker) PlaceJob() (string, bool)                              { return "http://127.0.0.1:1", true }

// TestDryRun: dry_run=true answers 200 with the plan and starts nothing;
// an invalid job's problems are listed with their fields and lines.
func TestDryRun(t *testing.T) {
	for _, tc := range []struct {
		name          string
		target        string
		err           error
		want          response
		wantValidated []string
	}{{
		name:          "valid",
		target:        "/v1/jobs?dry_run=true",
		want:          response{status: 200, header: map[string]string{"Content-Type": jsonType, "Location": ""}, body: `{"name":"demo","tasks":2,"vertices":[{"id":"gen","kind":"source","parallelism":2,"task":"gen"}]}`},
		wantValidated: []string{`name: demo` + "\n" + ` from="" allow=false`},
	}, {
		name:   "invalid job",
		target: "/v1/jobs?dry_run=true",
		err: &runtime.JobError{Problems: []spec.FieldError{
			{Path: "operators[0].map.module", Message: "no module sha256:beef (upload it first)", Line: 7},
			{Path: "sources[0].jetstream.stream", Message: `no stream "TEXT"; create it with: platform stream add TEXT --subjects 'text.>'`, Line: 3},
		}},
		want: response{status: 400, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/invalid-job","title":"Invalid job","status":400,` +
				`"detail":"invalid job: operators[0].map.module: no module sha256:beef (upload it first) (line 7); sources[0].jetstream.stream: no stream \"TEXT\"; create it with: platform stream add TEXT --subjects 'text.\u003e' (line 3)",` +
				`"problems":[{"field":"operators[0].map.module","message":"no module sha256:beef (upload it first)","line":7},` +
				`{"field":"sources[0].jetstream.stream","message":"no stream \"TEXT\"; create it with: platform stream add TEXT --subjects 'text.\u003e'","line":3}]}`},
	}, {
		name:          "dry run from a savepoint without checkpoints is refused",
		target:        "/v1/jobs?dry_run=true&from_savepoint=j-1",
		want:          response{status: 400, header: map[string]string{"Content-Type": problemType}, body: `{"type":"https://wasmstream.io/problems/invalid-request","title":"Invalid request","status":400,"detail":"from_savepoint: name a savepoint id (GET /v1/jobs/{id}/savepoints lists them)","problems":[{"field":"from_savepoint","message":"name a savepoint id (GET /v1/jobs/{id}/savepoints lists them)"}]}`},
		wantValidated: nil,
	}, {
		name:          "dry_run other than true submits",
		target:        "/v1/jobs?dry_run=1",
		want:          response{status: 201, header: map[string]string{"Content-Type": jsonType}, body: `{"id":"job-new","state":"CREATED"}`},
		wantValidated: nil,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			mods, jobs := fixtures()
			jobs.submitErr = tc.err
			h := New(Config{Modules: mods, Jobs: jobs, Logger: testLogger(t)})
			tc.want.check(t, request{method: "POST", target: tc.target, body: "name: demo\n", header: map[string]string{"Content-Type": "application/yaml"}}.do(h))
			if !slices.Equal(jobs.validated, tc.wantValidated) {
				t.Errorf("validated %q, want %q", jobs.validated, tc.wantValidated)
			}
			if strings.Contains(tc.target, "dry_run=true") && len(jobs.submitted) > 0 {
				t.Errorf("a dry run submitted %q", jobs.submitted)
			}
		})
	}
}

// TestJobSchemaRoute serves the generated schema.
func TestJobSchemaRoute(t *testing.T) {
	mods, jobs := fixtures()
	rec := request{method: "GET", target: "/v1/schema/job"}.do(New(Config{Modules: mods, Jobs: jobs, Logger: testLogger(t)}))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/schema+json" || rec.Body.String() != string(spec.JSONSchema()) {
		t.Errorf("GET /v1/schema/job: %d %s %.80s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
}
