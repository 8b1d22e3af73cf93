package api

import (
	"testing"
	"time"

	"wasmstream.io/platform/runtime"
	"wasmstream.io/platform/runtime/exec"
)

func TestJobExceptions(t *testing.T) {
	zero := 0
	at := time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC)
	tests := []struct {
		name string
		req  request
		want response
	}{{
		name: "newest first",
		req:  request{method: "GET", target: "/v1/jobs/job-3/exceptions"},
		want: response{status: 200, header: map[string]string{"Content-Type": jsonType},
			body: `{"exceptions":[{"time":"2026-01-02T03:04:06Z","task":"parse","subtask":0,"error":"task parse: trap","action":"fail","delay_ms":0},` +
				`{"time":"2026-01-02T03:04:06Z","task":"parse","subtask":0,"error":"task parse: trap","action":"restart","attempt":1,"delay_ms":250}]}`},
	}, {
		name: "none yet",
		req:  request{method: "GET", target: "/v1/jobs/job-1/exceptions"},
		want: response{status: 200, header: map[string]string{"Content-Type": jsonType}, body: `{"exceptions":[]}`},
	}, {
		name: "missing job",
		req:  request{method: "GET", target: "/v1/jobs/job-9/exceptions"},
		want: response{status: 404, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/not-found","title":"Not found","status":404,"detail":"job job-9: not found"}`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mods, jobs := fixtures()
			jobs.jobs["job-3"] = runtime.JobInfo{ID: "job-3", Name: "traps", State: runtime.StateFailed, Created: t0, Restarts: 1,
				Exceptions: []exec.Exception{
					{Time: at, Task: "parse", Subtask: &zero, Error: "task parse: trap", Action: exec.ActionFail},
					{Time: at, Task: "parse", Subtask: &zero, Error: "task parse: trap", Action: exec.ActionRestart, Attempt: 1, DelayMS: 250},
				}}
			h := New(Config{Modules: mods, Jobs: jobs, Logger: testLogger(t)})
			tt.want.check(t, tt.req.do(h))
		})
	}
}
