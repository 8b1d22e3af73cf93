package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

// TestRestartResumesRunningJobs stops a platform while a job runs and starts
// another on the same data directory: the job runs again, and a job that had
// finished stays finished.
func TestRestartResumesRunningJobs(t *testing.T) {
	dir := t.TempDir()
	ts := startTestServerIn(t, dir)
	mod := ts.upload(wasmbuild.UDF(t, "upper-wat"))
	ts.stream("IN", []string{"in"}, values("a", 0, 100))
	ts.stream("OUT", []string{"out"}, nil)
	finished := ts.submit(`
name: finished
sources: [{id: gen, generator: {kind: sequence, count: 10}}]
sinks: [{id: out, input: gen, discard: true}]
`)
	if info := ts.wait(finished); info.State != runtime.StateFinished {
		t.Fatalf("finished job: %s %s", info.State, info.Failure)
	}
	running := ts.submit(fmt.Sprintf(`
name: running
sources: [{id: in, jetstream: {stream: IN}}]
operators: [{id: up, input: in, map: {module: %s, function: upper}}]
sinks: [{id: out, input: up, jetstream: {subject: out}}]
`, mod))
	ts.waitFor("100 records out", func() bool { return len(ts.read("OUT")) >= 100 })
	ts.stop()

	ts = startTestServerIn(t, dir)
	ts.waitFor("the job to resume", func() bool {
		info := ts.job(running)
		if info.State.Terminal() {
			t.Fatalf("resumed job: %s %s", info.State, info.Failure)
		}
		return info.State == runtime.StateRunning
	})
	if info := ts.job(finished); info.State != runtime.StateFinished {
		t.Fatalf("finished job after restart: %s", info.State)
	}
	ts.publish("in", values("b", 0, 100))
	ts.waitFor("the new records out", func() bool {
		seen := map[string]bool{}
		for _, m := range ts.read("OUT") {
			seen[string(m.Data())] = true
		}
		for i := 0; i < 100; i++ {
			if !seen["A"+strconv.Itoa(i)] || !seen["B"+strconv.Itoa(i)] {
				return false
			}
		}
		return true
	})
}

// values makes n payloads prefix0 .. prefix<n-1>, starting at from.
func values(prefix string, from, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(prefix + strconv.Itoa(from+i))
	}
	return out
}

// job reads a job's info.
func (ts *testServer) job(id string) runtime.JobInfo {
	ts.t.Helper()
	status, body := ts.call(http.MethodGet, "/v1/jobs/"+id, "", nil)
	if status != http.StatusOK {
		ts.t.Fatalf("get job: %d %s", status, body)
	}
	var info runtime.JobInfo
	if err := json.Unmarshal(body, &info); err != nil {
		ts.t.Fatal(err)
	}
	return info
}

// publish sends payloads to a subject and waits for their acks.
func (ts *testServer) publish(subject string, payloads [][]byte) {
	ts.t.Helper()
	publishAll(ts.t, ts.js, payloads, func(int) string { return subject })
}

// waitFor polls cond until it holds, failing after a minute.
func (ts *testServer) waitFor(what string, cond func() bool) {
	ts.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			ts.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
