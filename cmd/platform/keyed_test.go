package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

// jobSpec reads a UDF's job.yaml, with the module's id in place and its
// JetStream source bounded, so that the job finishes.
func jobSpec(t *testing.T, udf, module string, edits ...string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(wasmbuild.Root(), "udfs", udf, "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec := strings.ReplaceAll(string(data), "${MODULE}", module)
	spec = strings.Replace(spec, `subjects: ["`+strings.ToLower(udfStream[udf])+`.>"]}`, `subjects: ["`+strings.ToLower(udfStream[udf])+`.>"], bounded: true}`, 1)
	if !strings.Contains(spec, "bounded: true") {
		t.Fatalf("job.yaml of %s has no JetStream source to bound", udf)
	}
	for i := 0; i < len(edits); i += 2 {
		if !strings.Contains(spec, edits[i]) {
			t.Fatalf("job.yaml of %s has no %q", udf, edits[i])
		}
		spec = strings.Replace(spec, edits[i], edits[i+1], 1)
	}
	return spec
}

// udfStream is the stream each example job reads.
var udfStream = map[string]string{"dedup": "EVENTS", "fraud": "TRANSACTIONS"}

// publishBy creates a stream over subjects and publishes each payload to the
// subject chosen for it.
func (ts *testServer) publishBy(name string, subjects []string, payloads [][]byte, subject func(i int) string) {
	ts.t.Helper()
	ts.stream(name, subjects, nil)
	publishAll(ts.t, ts.js, payloads, subject)
}

func vertexInfo(info runtime.JobInfo, id string) runtime.VertexInfo {
	for _, v := range info.Vertices {
		if v.ID == id {
			return v
		}
	}
	return runtime.VertexInfo{}
}

func TestDedupEndToEnd(t *testing.T) {
	ts := startTestServer(t)
	module := ts.upload(wasmbuild.UDF(t, "dedup"))
	const n, ids = 6000, 1500
	events := make([][]byte, n)
	want := map[string]string{}
	for i := range events {
		id := fmt.Sprintf("e%d", (i*7919)%ids)
		events[i] = fmt.Appendf(nil, `{"id":%q,"n":%d}`, id, i)
		if _, ok := want[id]; !ok {
			want[id] = string(events[i])
		}
	}
	// Every event of an id goes to one subject, so its order is fixed.
	ts.publishBy("EVENTS", []string{"events.>"}, events, func(i int) string { return fmt.Sprintf("events.s%d", (i*7919)%ids%3) })
	for _, backend := range []string{"memory", "pebble"} {
		t.Run(backend, func(t *testing.T) {
			subject := "unique." + backend
			ts.stream("UNIQUE_"+strings.ToUpper(backend), []string{subject}, nil)
			job := ts.submit(jobSpec(t, "dedup", module,
				"name: dedup", "name: dedup\nstate: {backend: "+backend+"}",
				"subject: unique.events", "subject: "+subject))
			info := ts.wait(job)
			if info.State != runtime.StateFinished {
				t.Fatalf("job %s: %s", info.State, info.Failure)
			}
			got := map[string]string{}
			for _, m := range ts.read("UNIQUE_" + strings.ToUpper(backend)) {
				key := m.Headers().Get("Platform-Key")
				if _, dup := got[key]; dup {
					t.Fatalf("id %s passed twice", key)
				}
				got[key] = string(m.Data())
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %d unique events, want %d (or other values)", len(got), len(want))
			}
			if v := vertexInfo(info, "unique"); v.RecordsIn != n || v.RecordsOut != ids {
				t.Fatalf("vertex unique: in %d out %d, want %d and %d", v.RecordsIn, v.RecordsOut, n, ids)
			}
			if entries, err := os.ReadDir(filepath.Join(ts.s.cfg.DataDir, "state")); err == nil && len(entries) > 0 {
				t.Fatalf("state left on disk after the job: %v", entries)
			}
		})
	}
}

// fraudAlerts is the fraud detector's rule, written again: per account, in
// order, a transaction above 500 right after one below 1 and at most a
// minute later is an alert.
func fraudAlerts(accounts []string, amounts []float64, stamps []int64) []string {
	type pending struct {
		deadline int64
		ok       bool
	}
	last := map[string]pending{}
	var alerts []string
	for i, acct := range accounts {
		if p := last[acct]; p.ok {
			if amounts[i] > 500 && stamps[i] <= p.deadline {
				alerts = append(alerts, fmt.Sprintf(`{"account":%q,"ts":%d,"amount":%.2f}`, acct, stamps[i], amounts[i]))
			}
			delete(last, acct)
		}
		if amounts[i] < 1 {
			last[acct] = pending{stamps[i] + 60_000, true}
		}
	}
	sort.Strings(alerts)
	return alerts
}

func TestFraudEndToEnd(t *testing.T) {
	ts := startTestServer(t)
	module := ts.upload(wasmbuild.UDF(t, "fraud"))
	const n, accounts = 20_000, 40
	accts := make([]string, n)
	amounts := make([]float64, n)
	stamps := make([]int64, n)
	payloads := make([][]byte, n)
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for i := range payloads {
		accts[i] = fmt.Sprintf("acct-%02d", (i*17)%accounts)
		switch (i * 31) % 7 {
		case 0, 1:
			amounts[i] = 0.25
		case 2, 3:
			amounts[i] = 750
		default:
			amounts[i] = 42.5
		}
		stamps[i] = start + int64(i)*250
		payloads[i] = fmt.Appendf(nil, `{"account":%q,"amount":%.2f,"ts":%d}`, accts[i], amounts[i], stamps[i])
	}
	want := fraudAlerts(accts, amounts, stamps)
	if len(want) < 100 {
		t.Fatalf("the input raises only %d alerts", len(want))
	}
	ts.publishBy("TRANSACTIONS", []string{"transactions.>"}, payloads, func(i int) string { return fmt.Sprintf("transactions.p%d", (i*17)%accounts%2) })
	ts.stream("ALERTS", []string{"alerts"}, nil)
	info := ts.wait(ts.submit(jobSpec(t, "fraud", module)))
	if info.State != runtime.StateFinished {
		t.Fatalf("job %s: %s", info.State, info.Failure)
	}
	var got []string
	for _, m := range ts.read("ALERTS") {
		got = append(got, string(m.Data()))
		if !strings.Contains(string(m.Data()), `"account":"`+m.Headers().Get("Platform-Key")+`"`) {
			t.Fatalf("alert %s with key %s", m.Data(), m.Headers().Get("Platform-Key"))
		}
	}
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %d alerts, want %d", len(got), len(want))
	}
}

// Keyed state past the job's memory budget fails the job with a message
// that says what to do.
func TestStateBudgetFailsTheJob(t *testing.T) {
	ts := startTestServer(t)
	module := ts.upload(wasmbuild.UDF(t, "dedup"))
	events := make([][]byte, 5000)
	for i := range events {
		events[i] = fmt.Appendf(nil, `{"id":"e%d"}`, i)
	}
	ts.publishBy("EVENTS", []string{"events.>"}, events, func(i int) string { return "events.all" })
	ts.stream("UNIQUE", []string{"unique.events"}, nil)
	info := ts.wait(ts.submit(jobSpec(t, "dedup", module, "name: dedup", "name: dedup\nstate: {budget: 100000}")))
	if info.State != runtime.StateFailed || !strings.Contains(info.Failure, "memory budget of 100000 bytes") ||
		!strings.Contains(info.Failure, "state: {backend: pebble}") || !strings.Contains(info.Failure, "operator[unique]") {
		t.Fatalf("state %s, failure %q", info.State, info.Failure)
	}
}

// A keyed job is checked against its module at submission.
func TestKeyedJobIsCheckedAtSubmission(t *testing.T) {
	ts := startTestServer(t)
	fraud := ts.upload(wasmbuild.UDF(t, "fraud"))
	ts.stream("TRANSACTIONS", []string{"transactions.>"}, nil)
	tests := []struct {
		name     string
		edits    []string
		mentions []string
	}{
		{"unknown state", []string{"on_timer: expire", "on_timer: expire\n    state_ttl: [{state: seen, ttl: 1h}]"},
			[]string{"operators[0].state_ttl[0].state", `declares no state \"seen\"`, "small (value)"}},
		{"on_timer of another kind", []string{"on_timer: expire", "on_timer: detect"},
			[]string{"operators[0].on_timer.function", `\"detect\" is a process function, want on_timer`}},
		{"process of another kind", []string{"function: detect}", "function: expire}"},
			[]string{"operators[0].process.function", `\"expire\" is a on_timer function, want process`}},
		{"process without key_by", []string{"    key_by: {field: account}\n", ""},
			[]string{"operators[0].key_by", "required by process"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := ts.call(http.MethodPost, "/v1/jobs", "application/yaml", []byte(jobSpec(t, "fraud", fraud, tt.edits...)))
			if status != http.StatusBadRequest {
				t.Fatalf("status %d: %s", status, body)
			}
			for _, m := range tt.mentions {
				if !strings.Contains(string(body), m) {
					t.Errorf("answer does not mention %q: %s", m, body)
				}
			}
		})
	}
}
