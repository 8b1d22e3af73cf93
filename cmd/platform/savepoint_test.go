package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

// stopWithSavepoint stops a job with a savepoint and returns the savepoint's
// id once the job has finished.
func (ts *testServer) stopWithSavepoint(job string) string {
	ts.t.Helper()
	ts.waitFor("the job to run", func() bool { return ts.job(job).State == runtime.StateRunning })
	status, body := ts.call(http.MethodPost, "/v1/jobs/"+job+"/stop", "", nil)
	if status != http.StatusAccepted {
		ts.t.Fatalf("stop: %d %s", status, body)
	}
	var sp runtime.SavepointInfo
	if err := json.Unmarshal(body, &sp); err != nil {
		ts.t.Fatal(err)
	}
	if info := ts.wait(job); info.State != runtime.StateFinished {
		ts.t.Fatalf("stopped job: %s %s", info.State, info.Failure)
	}
	status, body = ts.call(http.MethodGet, "/v1/jobs/"+job+"/savepoints", "", nil)
	if status != http.StatusOK || !strings.Contains(string(body), `"id":"`+sp.ID+`"`) || !strings.Contains(string(body), `"status":"COMPLETED"`) {
		ts.t.Fatalf("savepoints: %d %s", status, body)
	}
	return sp.ID
}

// submitFrom submits a job from a savepoint.
func (ts *testServer) submitFrom(spec, savepoint string) string {
	ts.t.Helper()
	status, body := ts.call(http.MethodPost, "/v1/jobs?from_savepoint="+savepoint, "application/yaml", []byte(spec))
	if status != http.StatusCreated {
		ts.t.Fatalf("submit from %s: %d %s", savepoint, status, body)
	}
	var info runtime.JobInfo
	if err := json.Unmarshal(body, &info); err != nil {
		ts.t.Fatal(err)
	}
	return info.ID
}

// TestSavepointRescale runs a keyed job at parallelism 2, stops it with a
// savepoint, and continues from each savepoint at parallelism 4, then 2,
// then 3, with new input each time. Keyed state follows its key groups to
// their new subtasks: every output sees the previous record's state, and
// the output is exactly once, in order per key.
func TestSavepointRescale(t *testing.T) {
	ts := startTestServer(t)
	mod := ts.upload(wasmbuild.UDF(t, "seqcheck"))
	const keys, perStage = 60, 20
	ts.stream("IN", []string{"in.>"}, nil)
	ts.stream("OUT", []string{"out"}, nil)
	publish := func(stage int) {
		var payloads [][]byte
		for s := stage*perStage + 1; s <= (stage+1)*perStage; s++ {
			for k := 0; k < keys; k++ {
				payloads = append(payloads, fmt.Appendf(nil, `{"k":"key%d","s":%d}`, k, s))
			}
		}
		publishAll(t, ts.js, payloads, func(i int) string { return fmt.Sprintf("in.%d", i%keys%4) })
	}
	spec := func(p int) string {
		return fmt.Sprintf(`
name: rescale
parallelism: %d
checkpoint: {interval: 200ms, mode: exactly_once}
sources: [{id: in, jetstream: {stream: IN, subjects: ["in.0", "in.1", "in.2", "in.3"]}}]
operators: [{id: track, input: in, key_by: {field: k}, process: {module: %s, function: track}}]
sinks: [{id: out, input: track, jetstream: {subject: out}}]
`, p, mod)
	}
	savepoint := ""
	for stage, p := range []int{2, 4, 2, 3} {
		publish(stage)
		var job string
		if savepoint == "" {
			job = ts.submit(spec(p))
		} else {
			job = ts.submitFrom(spec(p), savepoint)
		}
		want := (stage + 1) * perStage * keys
		ts.waitFor(fmt.Sprintf("%d outputs at parallelism %d", want, p), func() bool { return len(ts.read("OUT")) >= want })
		savepoint = ts.stopWithSavepoint(job)
	}
	checkSequences(t, payloadsOf(ts.read("OUT")), keys, 4*perStage)
}

// TestSavepointRefusals: a savepoint needs a job that takes checkpoints, and
// a job restoring one must have a place for each operator's state.
func TestSavepointRefusals(t *testing.T) {
	ts := startTestServer(t)
	mod := ts.upload(wasmbuild.UDF(t, "seqcheck"))
	ts.stream("IN", []string{"in.>"}, values(`{"k":"a","s":`, 1, 10))
	ts.stream("OUT", []string{"out"}, nil)
	plain := ts.submit(`
name: plain
sources: [{id: gen, generator: {kind: sequence, rate: 10}}]
sinks: [{id: out, input: gen, discard: true}]
`)
	if status, body := ts.call(http.MethodPost, "/v1/jobs/"+plain+"/savepoints", "", nil); status != http.StatusConflict {
		t.Fatalf("savepoint of a job without checkpoints: %d %s", status, body)
	}
	job := ts.submit(fmt.Sprintf(`
name: keyed
checkpoint: {interval: 100ms}
sources: [{id: in, jetstream: {stream: IN, subjects: ["in.>"]}}]
operators: [{id: track, input: in, key_by: {field: k}, process: {module: %s, function: track}}]
sinks: [{id: out, input: track, jetstream: {subject: out}}]
`, mod))
	sp := ts.stopWithSavepoint(job)
	renamed := fmt.Sprintf(`
name: renamed
checkpoint: {interval: 100ms}
sources: [{id: in, jetstream: {stream: IN, subjects: ["in.>"]}}]
operators: [{id: track2, input: in, key_by: {field: k}, process: {module: %s, function: track}}]
sinks: [{id: out, input: track2, jetstream: {subject: out}}]
`, mod)
	status, body := ts.call(http.MethodPost, "/v1/jobs?from_savepoint="+sp, "application/yaml", []byte(renamed))
	if status != http.StatusBadRequest || !strings.Contains(string(body), `keyed state of operator \"track\"`) {
		t.Fatalf("from a savepoint whose operator is gone: %d %s", status, body)
	}
	status, body = ts.call(http.MethodPost, "/v1/jobs?from_savepoint="+sp+"&allow_non_restored_state=true", "application/yaml", []byte(renamed))
	if status != http.StatusCreated {
		t.Fatalf("with allow_non_restored_state: %d %s", status, body)
	}
	if status, body := ts.call(http.MethodPost, "/v1/jobs?from_savepoint="+job+"-999", "application/yaml", []byte(renamed)); status != http.StatusBadRequest {
		t.Fatalf("from a missing savepoint: %d %s", status, body)
	}
}
