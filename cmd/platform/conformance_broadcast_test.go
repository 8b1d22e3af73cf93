package main

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

// broadcastLanguages are the languages the rules module (udfs/rules, the
// broadcast state pattern) is written in, Go first: every SDK's.
var broadcastLanguages = conformanceLanguages

// TestBroadcastConformance runs the rules module of every language in a
// broadcast_process job through the platform: rules broadcast to two
// subtasks, events keyed by user, the rules changed between batches of
// events. The order between the two inputs is not fixed (as in Flink), so
// each batch is published once the operator has taken in the one before.
// Every language's sink output is byte for byte the Go module's (sorted:
// two subtasks interleave), headers and event timestamps included, and the
// Go module's is the expected one.
func TestBroadcastConformance(t *testing.T) {
	ts := startTestServer(t)
	users := []string{"ann", "bob", "cid", "dan", "eve", "fay", "gus"}
	events := func(amount int) [][]byte {
		var out [][]byte
		for i, u := range users {
			out = append(out, fmt.Appendf(nil, `{"user":%q,"amount":%d,"ts":%d}`, u, amount, amount*10+i))
		}
		return out
	}
	phases := []struct {
		subject  string
		payloads [][]byte
	}{
		{"events", events(700)},
		{"rules", [][]byte{[]byte(`{"rule":"big","min":100}`), []byte(`{"rule":"any","min":0}`)}},
		{"events", events(150)},
		{"rules", [][]byte{[]byte(`{"rule":"big","min":200}`), []byte(`{"rule":"any"}`), []byte(`{"rule":"huge","min":600}`)}},
		{"events", events(650)},
	}
	var want []string
	for l, lang := range broadcastLanguages {
		module := ts.upload(wasmbuild.UDF(t, "rules"+lang.suffix))
		rules, evs, out := fmt.Sprintf("BC_RULES_%d", l), fmt.Sprintf("BC_EVENTS_%d", l), fmt.Sprintf("BC_OUT_%d", l)
		prefix := fmt.Sprintf("bc.%d", l)
		ts.stream(rules, []string{prefix + ".rules"}, nil)
		ts.stream(evs, []string{prefix + ".events"}, nil)
		ts.stream(out, []string{prefix + ".out"}, nil)
		job := ts.submit(fmt.Sprintf(`
name: broadcast-conformance-%s
sources:
  - {id: rules, jetstream: {stream: %s}}
  - {id: events, jetstream: {stream: %s}, timestamp: {field: ts}}
operators:
  - id: match
    parallelism: 2
    input: events
    key_by: {field: user}
    broadcast_process: {broadcast: rules, module: %s, process_element: match, process_broadcast: update}
sinks: [{id: out, input: match, jetstream: {subject: %s.out}}]
`, lang.name, rules, evs, module, prefix))
		in := int64(0)
		for _, ph := range phases {
			ts.publish(prefix+"."+ph.subject, ph.payloads)
			n := int64(len(ph.payloads))
			if ph.subject == "rules" {
				n *= 2 // every subtask takes in every rule
			}
			in += n
			ts.waitVertexIn(job, "match", in)
		}
		const matches = 7 * 4
		deadline := time.Now().Add(2 * time.Minute)
		for len(ts.read(out)) < matches {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d matches after two minutes, want %d", lang.name, len(ts.read(out)), matches)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if status, body := ts.call(http.MethodPost, "/v1/jobs/"+job+"/cancel", "", nil); status != http.StatusOK {
			t.Fatalf("cancel: %d %s", status, body)
		}
		if info := ts.wait(job); info.State != runtime.StateCanceled {
			t.Fatalf("%s: job %s: %s", lang.name, info.State, info.Failure)
		}
		msgs := ts.read(out)
		got := sinkOutput(msgs)
		slices.Sort(got)
		if l == 0 {
			var payloads, ref []string
			for _, m := range msgs {
				payloads = append(payloads, string(m.Data()))
			}
			for _, u := range users {
				ref = append(ref,
					fmt.Sprintf(`{"user":%q,"rule":"any","amount":150,"hits":1}`, u),
					fmt.Sprintf(`{"user":%q,"rule":"big","amount":150,"hits":2}`, u),
					fmt.Sprintf(`{"user":%q,"rule":"big","amount":650,"hits":3}`, u),
					fmt.Sprintf(`{"user":%q,"rule":"huge","amount":650,"hits":4}`, u))
			}
			slices.Sort(payloads)
			slices.Sort(ref)
			if !slices.Equal(payloads, ref) {
				t.Fatalf("go: matches\n got %q\nwant %q", payloads, ref)
			}
			want = got
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %d messages, want go's %d:\n got %q\nwant %q", lang.name, len(got), len(want), got, want)
		}
	}
}

// waitVertexIn waits until vertex of job has taken in n records.
func (ts *testServer) waitVertexIn(job, vertex string, n int64) {
	ts.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		info := ts.job(job)
		for _, v := range info.Vertices {
			if v.ID == vertex && v.RecordsIn == n {
				return
			}
		}
		if info.State.Terminal() {
			ts.t.Fatalf("job %s: %s", info.State, info.Failure)
		}
		if time.Now().After(deadline) {
			ts.t.Fatalf("vertex %s has not taken in %d records after two minutes", vertex, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
