package api

import (
	"fmt"
	"slices"
	"testing"

	"wasmstream.io/platform/runtime"
	"wasmstream.io/platform/runtime/spec"
)

func TestJobs(t *testing.T) {
	const (
		created  = `{"id":"job-new","state":"CREATED"}`
		job1     = `{"id":"job-1","name":"clicks","state":"RUNNING","created":"2026-01-02T03:04:05Z","vertices":[{"id":"parse","kind":"map","parallelism":2,"task":"t0","records_in":10,"records_out":9,"udf_errors":0,"skipped":0,"dead_lettered":0,"backpressure":0.5,"watermark":1700}]}`
		job2     = `{"id":"job-2","name":"done","state":"FINISHED","created":"2026-01-02T03:04:05Z","ended":"2026-01-02T04:00:00Z"}`
		jsonSpec = `{"name":"demo"}`
		yamlSpec = "name: demo\n"
	)
	createdHeader := map[string]string{"Content-Type": jsonType, "Location": "/v1/jobs/job-new"}
	tests := []struct {
		name string
		// submitErr is what SubmitJob fails with.
		submitErr     error
		req           request
		want          response
		wantSubmitted []string
	}{{
		name:          "submit json",
		req:           request{method: "POST", target: "/v1/jobs", body: jsonSpec, header: map[string]string{"Content-Type": "application/json"}},
		want:          response{status: 201, header: createdHeader, body: created},
		wantSubmitted: []string{jsonSpec},
	}, {
		name:          "submit yaml",
		req:           request{method: "POST", target: "/v1/jobs", body: yamlSpec, header: map[string]string{"Content-Type": "application/yaml"}},
		want:          response{status: 201, header: createdHeader, body: created},
		wantSubmitted: []string{yamlSpec},
	}, {
		name:          "submit x-yaml",
		req:           request{method: "POST", target: "/v1/jobs", body: yamlSpec, header: map[string]string{"Content-Type": "application/x-yaml"}},
		want:          response{status: 201, header: createdHeader, body: created},
		wantSubmitted: []string{yamlSpec},
	}, {
		name:          "submit text/yaml with a charset",
		req:           request{method: "POST", target: "/v1/jobs", body: yamlSpec, header: map[string]string{"Content-Type": "text/yaml; charset=utf-8"}},
		want:          response{status: 201, header: createdHeader, body: created},
		wantSubmitted: []string{yamlSpec},
	}, {
		name:          "submit without a content type",
		req:           request{method: "POST", target: "/v1/jobs", body: yamlSpec},
		want:          response{status: 201, header: createdHeader, body: created},
		wantSubmitted: []string{yamlSpec},
	}, {
		name: "submit form data",
		req:  request{method: "POST", target: "/v1/jobs", body: yamlSpec, header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
		want: response{status: 415, header: map[string]string{"Content-Type": problemType, "Location": ""},
			body: `{"type":"about:blank","title":"Unsupported Media Type","status":415,"detail":"Content-Type must be one of application/json, application/yaml, application/x-yaml, text/yaml; got application/x-www-form-urlencoded"}`},
	}, {
		name: "submit larger than the limit",
		req:  request{method: "POST", target: "/v1/jobs", body: `{"name":"a-longer-name"}`, header: map[string]string{"Content-Type": "application/json"}},
		want: response{status: 413, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"about:blank","title":"Request Entity Too Large","status":413,"detail":"job spec exceeds the limit of 16 bytes","limit":16}`},
	}, {
		name: "submit of unknown length larger than the limit",
		req:  request{method: "POST", target: "/v1/jobs", body: `{"name":"a-longer-name"}`, length: -1},
		want: response{status: 413, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"about:blank","title":"Request Entity Too Large","status":413,"detail":"job spec exceeds the limit of 16 bytes","limit":16}`},
	}, {
		name: "submit empty",
		req:  request{method: "POST", target: "/v1/jobs"},
		want: response{status: 400, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/invalid-request","title":"Invalid request","status":400,"detail":"empty body: send the job spec"}`},
	}, {
		name: "submit from a savepoint to a server without checkpoints",
		req:  request{method: "POST", target: "/v1/jobs?from_savepoint=sp-1", body: jsonSpec, header: map[string]string{"Content-Type": "application/json"}},
		want: response{status: 400, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/invalid-request","title":"Invalid request","status":400,` +
				`"detail":"from_savepoint: name a savepoint id (GET /v1/jobs/{id}/savepoints lists them)",` +
				`"problems":[{"field":"from_savepoint","message":"name a savepoint id (GET /v1/jobs/{id}/savepoints lists them)"}]}`},
	}, {
		name: "submit with an empty from_savepoint",
		req:  request{method: "POST", target: "/v1/jobs?from_savepoint=", body: jsonSpec},
		want: response{status: 400, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/invalid-request","title":"Invalid request","status":400,` +
				`"detail":"from_savepoint: name a savepoint id (GET /v1/jobs/{id}/savepoints lists them)",` +
				`"problems":[{"field":"from_savepoint","message":"name a savepoint id (GET /v1/jobs/{id}/savepoints lists them)"}]}`},
	}, {
		name: "submit a bad spec",
		submitErr: fmt.Errorf("parse: %w", &spec.Error{Problems: []spec.FieldError{
			{Path: "operators[1].window.size", Message: "must be positive", Line: 12},
			{Path: "sinks", Message: "at least one sink is required"},
			{Message: "not a mapping"},
		}}),
		req: request{method: "POST", target: "/v1/jobs", body: yamlSpec, header: map[string]string{"Content-Type": "application/yaml"}},
		want: response{status: 400, header: map[string]string{"Content-Type": problemType, "Location": ""},
			body: `{"type":"https://wasmstream.io/problems/invalid-spec","title":"Invalid job spec","status":400,` +
				`"detail":"invalid job spec: operators[1].window.size: must be positive (line 12); sinks: at least one sink is required; not a mapping",` +
				`"problems":[{"field":"operators[1].window.size","message":"must be positive","line":12},` +
				`{"field":"sinks","message":"at least one sink is required"},{"message":"not a mapping"}]}`},
	}, {
		name:      "submit a job that does not fit its modules",
		submitErr: fmt.Errorf(`%w: operators[0].map: module sha256:beef has no function "parse"`, runtime.ErrInvalidJob),
		req:       request{method: "POST", target: "/v1/jobs", body: jsonSpec, header: map[string]string{"Content-Type": "application/json"}},
		want: response{status: 400, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/invalid-job","title":"Invalid job","status":400,"detail":"invalid job: operators[0].map: module sha256:beef has no function \"parse\""}`},
	}, {
		name: "list",
		req:  request{method: "GET", target: "/v1/jobs"},
		want: response{status: 200, header: map[string]string{"Content-Type": jsonType}, body: `{"jobs":[` + job1 + `,` + job2 + `]}`},
	}, {
		name: "get",
		req:  request{method: "GET", target: "/v1/jobs/job-1"},
		want: response{status: 200, header: map[string]string{"Content-Type": jsonType}, body: job1},
	}, {
		name: "get missing",
		req:  request{method: "GET", target: "/v1/jobs/job-9"},
		want: response{status: 404, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/not-found","title":"Not found","status":404,"detail":"job job-9: not found"}`},
	}, {
		name: "cancel",
		req:  request{method: "POST", target: "/v1/jobs/job-1/cancel"},
		want: response{status: 200, header: map[string]string{"Content-Type": jsonType},
			body: `{"id":"job-1","name":"clicks","state":"CANCELLING","created":"2026-01-02T03:04:05Z","vertices":[{"id":"parse","kind":"map","parallelism":2,"task":"t0","records_in":10,"records_out":9,"udf_errors":0,"skipped":0,"dead_lettered":0,"backpressure":0.5,"watermark":1700}]}`},
	}, {
		name: "cancel finished",
		req:  request{method: "POST", target: "/v1/jobs/job-2/cancel"},
		want: response{status: 409, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/job-finished","title":"Job already finished","status":409,"detail":"job job-2 is FINISHED: job already finished"}`},
	}, {
		name: "cancel missing",
		req:  request{method: "POST", target: "/v1/jobs/job-9/cancel"},
		want: response{status: 404, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/not-found","title":"Not found","status":404,"detail":"job job-9: not found"}`},
	}, {
		name: "cancel with GET",
		req:  request{method: "GET", target: "/v1/jobs/job-1/cancel"},
		want: response{status: 405, header: map[string]string{"Content-Type": problemType, "Allow": "POST"},
			body: `{"type":"about:blank","title":"Method Not Allowed","status":405,"detail":"GET is not allowed on /v1/jobs/job-1/cancel; allowed: POST"}`},
	}, {
		name: "backpressure",
		req:  request{method: "GET", target: "/v1/jobs/job-1/backpressure"},
		want: response{status: 200, header: map[string]string{"Content-Type": jsonType},
			body: `{"job":"job-1","state":"RUNNING","interval_ms":1000,"vertices":[{"id":"parse","task":"parse","level":"HIGH","ratio":0.9,"subtasks":[{"subtask":0,"level":"HIGH","ratio":0.9,"idle_ratio":0,"busy_ratio":0.1,"vertex_busy_ratio":0.1}]}],"bottleneck":null}`},
	}, {
		name: "backpressure of a missing job",
		req:  request{method: "GET", target: "/v1/jobs/job-9/backpressure"},
		want: response{status: 404, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/not-found","title":"Not found","status":404,"detail":"job job-9: not found"}`},
	}, {
		name: "stop is not there yet",
		req:  request{method: "POST", target: "/v1/jobs/job-1/stop"},
		want: response{status: 404, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"about:blank","title":"Not Found","status":404,"detail":"no route for POST /v1/jobs/job-1/stop"}`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mods, jobs := fixtures()
			jobs.submitErr = tt.submitErr
			h := New(Config{Modules: mods, Jobs: jobs, MaxSpecSize: 16, Logger: testLogger(t)})
			tt.want.check(t, tt.req.do(h))
			var got []string
			for _, b := range jobs.submitted {
				got = append(got, string(b))
			}
			if !slices.Equal(got, tt.wantSubmitted) {
				t.Errorf("submitted %q, want %q", got, tt.wantSubmitted)
			}
		})
	}
}

func TestEmptyLists(t *testing.T) {
	tests := []struct {
		target string
		want   string
	}{
		{"/v1/modules", `{"modules":[]}`},
		{"/v1/jobs", `{"jobs":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			mods := &fakeModules{mods: map[string]runtime.ModuleInfo{}}
			jobs := &fakeJobs{jobs: map[string]runtime.JobInfo{}}
			h := New(Config{Modules: mods, Jobs: jobs, Logger: testLogger(t)})
			response{status: 200, body: tt.want}.check(t, request{method: "GET", target: tt.target}.do(h))
		})
	}
}
