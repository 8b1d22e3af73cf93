package api

import (
	"slices"
	"testing"
)

// TestJobSpecAndDeleteRoutes: a job's spec comes back as submitted with its
// media type; an ended job is deleted, with savepoints when asked; a running
// one is 409 job-not-ended; savepoints are deleted, 409 savepoint-in-use
// while a job may restore them.
func TestJobSpecAndDeleteRoutes(t *testing.T) {
	const notFound1 = `{"type":"https://wasmstream.io/problems/not-found","title":"Not found","status":404,"detail":"job job-9: not found"}`
	tests := []struct {
		name        string
		req         request
		want        response
		wantDeleted []string
	}{{
		name: "yaml spec",
		req:  request{method: "GET", target: "/v1/jobs/job-1/spec"},
		want: response{status: 200, header: map[string]string{"Content-Type": "application/yaml", "Content-Length": "13"}, body: "name: clicks"},
	}, {
		name: "json spec",
		req:  request{method: "GET", target: "/v1/jobs/job-2/spec"},
		want: response{status: 200, header: map[string]string{"Content-Type": "application/json"}, body: `{"name": "done"}`},
	}, {
		name: "spec of no job",
		req:  request{method: "GET", target: "/v1/jobs/job-9/spec"},
		want: response{status: 404, header: map[string]string{"Content-Type": problemType}, body: notFound1},
	}, {
		name:        "delete an ended job",
		req:         request{method: "DELETE", target: "/v1/jobs/job-2"},
		want:        response{status: 204, header: map[string]string{"Content-Type": ""}},
		wantDeleted: []string{"job-2 savepoints=false"},
	}, {
		name:        "delete with savepoints",
		req:         request{method: "DELETE", target: "/v1/jobs/job-2?savepoints=true"},
		want:        response{status: 204},
		wantDeleted: []string{"job-2 savepoints=true"},
	}, {
		name:        "delete keeping savepoints, said",
		req:         request{method: "DELETE", target: "/v1/jobs/job-2?savepoints=false"},
		want:        response{status: 204},
		wantDeleted: []string{"job-2 savepoints=false"},
	}, {
		name: "savepoints neither true nor false",
		req:  request{method: "DELETE", target: "/v1/jobs/job-2?savepoints=yes"},
		want: response{status: 400, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/invalid-request","title":"Invalid request","status":400,"detail":"savepoints: want true or false, got \"yes\"","problems":[{"field":"savepoints","message":"want true or false, got \"yes\""}]}`},
	}, {
		name: "delete a running job",
		req:  request{method: "DELETE", target: "/v1/jobs/job-1"},
		want: response{status: 409, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/job-not-ended","title":"Job has not ended","status":409,"detail":"job job-1 is RUNNING; cancel or stop it first: job has not ended"}`},
	}, {
		name: "delete no job",
		req:  request{method: "DELETE", target: "/v1/jobs/job-9"},
		want: response{status: 404, header: map[string]string{"Content-Type": problemType}, body: notFound1},
	}, {
		name: "delete a savepoint",
		req:  request{method: "DELETE", target: "/v1/jobs/job-1/savepoints/job-1-1"},
		want: response{status: 204, header: map[string]string{"Content-Type": ""}},
	}, {
		name: "delete a savepoint in use",
		req:  request{method: "DELETE", target: "/v1/jobs/job-1/savepoints/job-1-2"},
		want: response{status: 409, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/savepoint-in-use","title":"Savepoint in use","status":409,"detail":"savepoint job-1-2: jobs job-9 started from it and have not ended: savepoint in use"}`},
	}, {
		name: "delete no savepoint",
		req:  request{method: "DELETE", target: "/v1/jobs/job-1/savepoints/job-1-7"},
		want: response{status: 404, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/not-found","title":"Not found","status":404,"detail":"savepoint job-1-7 of job job-1: not found"}`},
	}, {
		name: "delete a savepoint without checkpoints",
		req:  request{method: "DELETE", target: "/v1/jobs/job-2/savepoints/job-2-1"},
		want: response{status: 409, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/no-checkpoints","title":"Job takes no checkpoints","status":409,"detail":"job job-2: the job takes no checkpoints (its spec has no checkpoint block)"}`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mods, jobs := fixtures()
			h := New(Config{Modules: mods, Jobs: jobs, Checkpoints: fakeCheckpoints{}, Logger: testLogger(t)})
			tt.want.check(t, tt.req.do(h))
			if !slices.Equal(jobs.deleted, tt.wantDeleted) {
				t.Errorf("deleted %q, want %q", jobs.deleted, tt.wantDeleted)
			}
		})
	}
}

// TestModuleNamesListed: a named upload's names and version show in the
// list.
func TestModuleNamesListed(t *testing.T) {
	mods, jobs := fixtures()
	h := New(Config{Modules: mods, Jobs: jobs, Logger: testLogger(t)})
	response{status: 201, body: `{"id":"sha256:0061736d01000000","names":["words@1"],"version":"words@1","size":8,"functions":[{"name":"parse","kind":"map"}],"uploaded":"2026-01-02T03:04:05Z"}`}.check(t, request{method: "POST", target: "/v1/modules?name=words", body: wasm8, header: map[string]string{"Content-Type": "application/wasm"}}.do(h))
	response{status: 200, header: map[string]string{"Content-Type": jsonType},
		body: `{"modules":[{"id":"sha256:0061736d","size":4,"functions":[{"name":"parse","kind":"map"}],"uploaded":"2026-01-02T03:04:05Z"},` +
			`{"id":"sha256:0061736d01000000","names":["words@1"],"version":"words@1","size":8,"functions":[{"name":"parse","kind":"map"}],"uploaded":"2026-01-02T03:04:05Z"},` +
			`{"id":"sha256:00ff","size":2,"functions":[{"name":"keep","kind":"filter"}],"uploaded":"2026-01-02T03:04:05Z","used_by":["job-1"]}]}`}.
		check(t, request{method: "GET", target: "/v1/modules"}.do(h))
}
