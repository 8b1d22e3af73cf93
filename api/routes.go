package api

import (
	"net/http"
	"reflect"
	"strings"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/runtime"
)

// routeProblems answers requests no route matches, and methods a route does
// not allow, with problem details instead of the mux's plain text.
func routeProblems(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, pattern := mux.Handler(r); pattern == "" {
			h.ServeHTTP(&routeMiss{ResponseWriter: w, r: r}, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// routeMiss replaces the mux's 404 and 405 responses; anything else the mux
// answers without a route (a redirect to the cleaned path) passes through.
type routeMiss struct {
	http.ResponseWriter
	r        *http.Request
	replaced bool
}

func (m *routeMiss) WriteHeader(code int) {
	switch code {
	case http.StatusNotFound:
		m.replaced = true
		writeProblem(m.ResponseWriter, noRoute.problem("no route for "+m.r.Method+" "+m.r.URL.Path))
	case http.StatusMethodNotAllowed:
		m.replaced = true
		writeProblem(m.ResponseWriter, methodNotAllowed.problem(m.r.Method+" is not allowed on "+m.r.URL.Path+
			"; allowed: "+m.Header().Get("Allow")))
	default:
		m.ResponseWriter.WriteHeader(code)
	}
}

func (m *routeMiss) Write(b []byte) (int, error) {
	if m.replaced {
		return len(b), nil
	}
	return m.ResponseWriter.Write(b)
}

// route is one route of the API: what the mux serves, and what the OpenAPI
// document (openapi.go) says of it. The mux and the document are both made
// from routes, so neither has a route the other lacks.
type route struct {
	method string
	// path is the ServeMux pattern's path, with {id} wildcards.
	path    string
	op      string // the operationId
	summary string
	handler http.Handler
	// checkpoints: only served when the platform serves checkpoints.
	checkpoints bool
	// query lists the query parameters the handler reads.
	query []param
	// body is the request body's media types and schema, nil for none.
	body *body
	// ok are the success answers.
	ok []answer
	// kinds are the problems the route answers with, besides the 401 of
	// every /v1 route when a token is set.
	kinds []kind
}

// param is a query parameter.
type param struct{ name, doc string }

// body is a request body: the media types the route accepts ("" for none)
// and the schema of its content.
type body struct {
	types  []string
	schema any
	doc    string
}

// answer is a success: its status, what it means, and the Go value the
// handler encodes as JSON (nil for no body, or for text answers of
// contentType, a media type or several joined with ", ").
type answer struct {
	status      int
	doc         string
	value       any
	contentType string
}

// specTypes are the media types of a job spec.
var specTypes = []string{"", "application/json", "application/yaml", "application/x-yaml", "text/yaml"}

// routes are every route of the API but the web UI.
func (s *server) routes(metrics http.Handler) []route {
	rts := s.routeTable(metrics)
	// In cluster mode these are forwarded to the worker running the job
	// (forward.go), which may not answer; reads are then answered here.
	for i, rt := range rts {
		if (strings.HasPrefix(rt.path, "/v1/jobs/{id}") && rt.method != http.MethodGet) || rt.op == "submitJob" {
			rts[i].kinds = append(rt.kinds, workerUnreachable)
		}
	}
	return rts
}

func (s *server) routeTable(metrics http.Handler) []route {
	f := func(h http.HandlerFunc) http.Handler { return h }
	job := runtime.JobInfo{}
	return []route{
		{method: "POST", path: "/v1/modules", op: "uploadModule", summary: "Upload a module, with name: as the next version of a name", handler: f(s.uploadModule),
			query: []param{{"name", "make the module the next version of this name ([a-z0-9][a-z0-9_-]{0,62}): name@1, name@2, ..."}},
			body:  &body{types: []string{"application/wasm", "application/octet-stream"}, schema: map[string]any{"type": "string", "contentMediaType": "application/wasm"}, doc: "the module's raw bytes"},
			ok:    []answer{{status: 201, doc: "stored under its content hash", value: runtime.ModuleInfo{}}},
			kinds: []kind{invalidRequest, invalidModule, bodyTooLarge, unsupportedMediaType}},
		{method: "GET", path: "/v1/modules", op: "listModules", summary: "List modules", handler: f(s.listModules),
			ok: []answer{{status: 200, doc: "the modules", value: struct {
				Modules []runtime.ModuleInfo `json:"modules"`
			}{}}}},
		{method: "GET", path: "/v1/modules/{id}", op: "getModule", summary: "Describe a module, by id, name (its latest version) or name@version", handler: f(s.getModule),
			ok: []answer{{status: 200, doc: "the module", value: runtime.ModuleInfo{}}}, kinds: []kind{invalidRequest, notFound}},
		{method: "DELETE", path: "/v1/modules/{id}", op: "deleteModule", summary: "Delete a module no job uses, by id or name@version", handler: f(s.deleteModule),
			ok: []answer{{status: 204, doc: "deleted, with every name@version naming it"}}, kinds: []kind{invalidRequest, notFound, moduleInUse}},
		{method: "POST", path: "/v1/jobs", op: "submitJob", summary: "Submit a job spec (JSON or YAML), or check it with dry_run", handler: f(s.submitJob),
			query: []param{
				{"from_savepoint", "start from this savepoint (an id GET /v1/jobs/{id}/savepoints lists)"},
				{"from_checkpoint", "start from this retained checkpoint or savepoint (<job>-<id>; GET /v1/jobs/{id}/checkpoints lists a job's)"},
				{"allow_non_restored_state", "true: drop the savepoint's state that no operator takes"},
				{"dry_run", "true: run every check and answer with what would run, without starting the job"},
			},
			body: &body{types: specTypes, schema: map[string]any{"$ref": "/v1/schema/job"}, doc: "the job spec (docs/JOBS.md); its JSON Schema is GET /v1/schema/job"},
			ok: []answer{
				{status: 201, doc: "accepted and started", value: submitted{}},
				{status: 200, doc: "with dry_run=true: the job is valid and would run this", value: runtime.JobPlan{}},
			},
			kinds: []kind{invalidRequest, invalidSpec, invalidJob, bodyTooLarge, unsupportedMediaType}},
		{method: "GET", path: "/v1/workers", op: "listWorkers", summary: "The cluster's workers, their slots and the jobs each runs (empty outside cluster mode)", handler: f(s.workers),
			ok: []answer{{status: 200, doc: "the workers", value: struct {
				Workers []runtime.WorkerInfo `json:"workers"`
			}{}}}},
		{method: "GET", path: "/v1/jobs", op: "listJobs", summary: "List jobs", handler: f(s.listJobs),
			ok: []answer{{status: 200, doc: "the jobs", value: struct {
				Jobs []runtime.JobInfo `json:"jobs"`
			}{}}}},
		{method: "GET", path: "/v1/jobs/{id}", op: "getJob", summary: "A job's state and vertices", handler: f(s.getJob),
			ok: []answer{{status: 200, doc: "the job", value: job}}, kinds: []kind{notFound}},
		{method: "GET", path: "/v1/jobs/{id}/exceptions", op: "getJobExceptions", summary: "A job's last failures, newest first, and the restart or failure each led to", handler: f(s.jobExceptions),
			ok: []answer{{status: 200, doc: "the exception history (the last 32 failures)", value: exceptions{}}}, kinds: []kind{notFound}},
		{method: "GET", path: "/v1/jobs/{id}/quarantine", op: "listQuarantine", summary: "The keys a job parked under on_udf_error: quarantine", handler: f(s.listQuarantine),
			ok: []answer{{status: 200, doc: "the parked keys, by operator, subtask and key", value: quarantined{}}}, kinds: []kind{notFound, jobFinished}},
		{method: "POST", path: "/v1/jobs/{id}/quarantine/{key}/release", op: "releaseQuarantine", summary: "Release a parked key: its kept records are replayed through the operator, in order", handler: f(s.releaseQuarantine),
			query: []param{{"key_encoding", "base64url: the key in the path is in base64url (padded or not), as key_base64 of the list gives it, for a key that is not UTF-8 text"}},
			ok:    []answer{{status: 202, doc: "each operator subtask that parked the key replays it at its next batch, watermark or tick", value: released{}}}, kinds: []kind{invalidRequest, notFound, jobFinished}},
		{method: "DELETE", path: "/v1/jobs/{id}", op: "deleteJob", summary: "Delete a job that has ended, with its checkpoints", handler: f(s.deleteJob),
			query: []param{{"savepoints", "true: delete its savepoints too (kept otherwise)"}},
			ok:    []answer{{status: 204, doc: "deleted"}}, kinds: []kind{invalidRequest, notFound, jobNotEnded}},
		{method: "GET", path: "/v1/jobs/{id}/spec", op: "getJobSpec", summary: "The spec a job was submitted with, byte for byte", handler: f(s.getJobSpec),
			ok: []answer{{status: 200, doc: "the spec: application/json for a JSON spec, application/yaml otherwise", contentType: "application/yaml, application/json"}}, kinds: []kind{notFound}},
		{method: "POST", path: "/v1/jobs/{id}/cancel", op: "cancelJob", summary: "Cancel a job", handler: f(s.cancelJob),
			ok: []answer{{status: 200, doc: "cancelled", value: job}}, kinds: []kind{notFound, jobFinished}},
		{method: "GET", path: "/v1/jobs/{id}/backpressure", op: "getBackpressure", summary: "A job's backpressure by subtask, and its bottleneck", handler: f(s.backpressure),
			ok: []answer{{status: 200, doc: "the last sampled interval", value: runtime.BackpressureInfo{}}}, kinds: []kind{notFound}},
		{method: "POST", path: "/v1/jobs/{id}/replay", op: "replayKey", summary: "Replay one key of a job from a checkpoint", handler: f(s.replayKey),
			body:  &body{types: []string{"", "application/json"}, schema: map[string]any{"type": "object"}, doc: "what to replay: checkpoint, key, and optionally operator, module, until, records (docs/OPERATIONS.md)"},
			ok:    []answer{{status: 200, doc: "the replay's events, one JSON object a line", contentType: "application/x-ndjson"}},
			kinds: []kind{invalidRequest, notFound, bodyTooLarge, unsupportedMediaType}},
		{method: "GET", path: "/v1/jobs/{id}/sample", op: "getSample", summary: "The last records a sink of a job wrote", handler: f(s.sample),
			query: []param{
				{"sink", "the sink's id; may be left out when the job has one print sink, or one sink"},
				{"n", "how many records, 1 to 1000; default 20"},
			},
			ok:    []answer{{status: 200, doc: "a print sink's last records (kept in memory), or a JetStream sink's last messages (read from its stream)", value: runtime.Sample{}}},
			kinds: []kind{notFound, invalidRequest}},
		{method: "GET", path: "/v1/jobs/{id}/checkpoints", op: "listCheckpoints", summary: "A job's checkpoint history", handler: f(s.listCheckpoints), checkpoints: true,
			ok: []answer{{status: 200, doc: "oldest first", value: struct {
				Checkpoints []checkpoint.Stats `json:"checkpoints"`
			}{}}}, kinds: []kind{notFound, noCheckpoints}},
		{method: "POST", path: "/v1/jobs/{id}/savepoints", op: "triggerSavepoint", summary: "Trigger a savepoint", handler: f(s.triggerSavepoint), checkpoints: true,
			ok: []answer{{status: 202, doc: "triggered; poll GET /v1/jobs/{id}/savepoints", value: runtime.SavepointInfo{}}}, kinds: []kind{notFound, noCheckpoints}},
		{method: "GET", path: "/v1/jobs/{id}/savepoints", op: "listSavepoints", summary: "A job's savepoints", handler: f(s.listSavepoints), checkpoints: true,
			ok: []answer{{status: 200, doc: "the savepoints", value: struct {
				Savepoints []runtime.SavepointInfo `json:"savepoints"`
			}{}}}, kinds: []kind{notFound, noCheckpoints}},
		{method: "DELETE", path: "/v1/jobs/{id}/savepoints/{savepoint}", op: "deleteSavepoint", summary: "Dispose of a savepoint", handler: f(s.deleteSavepoint), checkpoints: true,
			ok: []answer{{status: 204, doc: "deleted"}}, kinds: []kind{notFound, noCheckpoints, savepointInUse}},
		{method: "POST", path: "/v1/jobs/{id}/stop", op: "stopJob", summary: "Stop a job with a savepoint", handler: f(s.stopJob), checkpoints: true,
			ok: []answer{{status: 202, doc: "the savepoint that stops the job is triggered", value: runtime.SavepointInfo{}}}, kinds: []kind{notFound, noCheckpoints}},
		{method: "POST", path: "/v1/jobs/{id}/upgrade", op: "upgradeJob", summary: "Switch a running job to a new module or spec at a checkpoint's barrier", handler: f(s.upgradeJob), checkpoints: true,
			body:  &body{types: []string{"", "application/json"}, schema: reflect.TypeOf(runtime.UpgradeRequest{}), doc: "the new module, a new spec of the same graph shape, or both, and the probation"},
			ok:    []answer{{status: 202, doc: "the switch began; GET /v1/jobs/{id} lists the versions and how the switch went", value: runtime.SwitchInfo{}}},
			kinds: []kind{invalidRequest, invalidSpec, invalidJob, notFound, noCheckpoints, switchInProgress, bodyTooLarge, unsupportedMediaType}},
		{method: "POST", path: "/v1/jobs/{id}/rescale", op: "rescaleJob", summary: "Change a running job's parallelism in place at a checkpoint's barrier", handler: f(s.rescaleJob), checkpoints: true,
			body:  &body{types: []string{"", "application/json"}, schema: reflect.TypeOf(runtime.RescaleRequest{}), doc: "the job's new default parallelism, and that of sources, operators and sinks by id"},
			ok:    []answer{{status: 202, doc: "the switch began; GET /v1/jobs/{id} lists the versions and how the switch went", value: runtime.SwitchInfo{}}},
			kinds: []kind{invalidRequest, invalidSpec, invalidJob, notFound, noCheckpoints, switchInProgress, bodyTooLarge, unsupportedMediaType}},
		{method: "POST", path: "/v1/jobs/{id}/promote", op: "promoteJob", summary: "Run a job's canary version on every key group, switched to at a checkpoint's barrier", handler: f(s.promoteJob), checkpoints: true,
			body:  &body{types: []string{"", "application/json"}, schema: reflect.TypeOf(runtime.PromoteRequest{}), doc: "optional: the promotion's probation"},
			ok:    []answer{{status: 202, doc: "the switch began; GET /v1/jobs/{id} lists the versions and how the switch went", value: runtime.SwitchInfo{}}},
			kinds: []kind{invalidRequest, invalidJob, notFound, noCheckpoints, switchInProgress, noCanary, bodyTooLarge, unsupportedMediaType}},
		{method: "POST", path: "/v1/jobs/{id}/rollback", op: "rollbackJob", summary: "Return every key group of a job running a canary to the job's own version", handler: f(s.rollbackJob), checkpoints: true,
			ok:    []answer{{status: 202, doc: "the switch began (or, for a canary on probation, its rollback); GET /v1/jobs/{id} lists the versions", value: runtime.SwitchInfo{}}},
			kinds: []kind{notFound, noCheckpoints, switchInProgress, noCanary}},
		{method: "GET", path: "/v1/openapi.json", op: "getOpenAPI", summary: "This document", handler: f(s.openAPIDoc),
			ok: []answer{{status: 200, doc: "the OpenAPI 3.1 document of this API", contentType: "application/json"}}},
		{method: "GET", path: "/v1/schema/job", op: "getJobSchema", summary: "The JSON Schema of a job spec", handler: f(jobSchema),
			ok: []answer{{status: 200, doc: "a JSON Schema (draft 2020-12)", contentType: "application/schema+json"}}},
		{method: "GET", path: "/metrics", op: "getMetrics", summary: "Prometheus metrics", handler: metrics,
			ok: []answer{{status: 200, doc: "the Prometheus text exposition", contentType: "text/plain"}}},
		{method: "GET", path: "/healthz", op: "getHealth", summary: "Liveness", handler: f(healthz),
			ok: []answer{{status: 200, doc: "the process serves HTTP", value: status{}}}},
		{method: "GET", path: "/readyz", op: "getReadiness", summary: "Readiness", handler: f(s.readyz),
			ok: []answer{{status: 200, doc: "ready to take work", value: status{}}}, kinds: []kind{notReady}},
	}
}

// status is the body of the probes' 200.
type status struct {
	Status string `json:"status"`
}
