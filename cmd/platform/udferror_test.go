package main

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
	"wasmstream.io/platform/runtime/operator"
)

// poisonInput is n records "r<i>" with the value "poison" at index n/2.
func poisonInput(n int, poison string) [][]byte {
	in := make([][]byte, n)
	for i := range in {
		in[i] = []byte("r" + strconv.Itoa(i))
	}
	in[n/2] = []byte(poison)
	return in
}

func TestPoisonRecordUnderEachPolicy(t *testing.T) {
	ts := startTestServer(t)
	faulty := ts.upload(wasmbuild.UDF(t, "faulty-wat"))
	const n = 1000
	tests := []struct {
		function string
		policy   string
	}{
		{"poison", "fail"}, {"poison", "skip"}, {"poison", "dead_letter"},
		{"reject", "fail"}, {"reject", "skip"}, {"reject", "dead_letter"},
	}
	for i, tt := range tests {
		t.Run(tt.function+"/"+tt.policy, func(t *testing.T) {
			in, out, dlq := fmt.Sprintf("IN%d", i), fmt.Sprintf("OUT%d", i), fmt.Sprintf("DLQ%d", i)
			ts.stream(in, []string{"in" + strconv.Itoa(i)}, poisonInput(n, "poison"))
			ts.stream(out, []string{"out" + strconv.Itoa(i)}, nil)
			ts.stream(dlq, []string{"dlq" + strconv.Itoa(i)}, nil)
			deadLetter := ""
			if tt.policy == "dead_letter" {
				deadLetter = "dead_letter_subject: dlq" + strconv.Itoa(i)
			}
			job := ts.submit(fmt.Sprintf(`
name: poison
on_udf_error: %s
%s
sources: [{id: in, jetstream: {stream: %s, bounded: true}}]
operators: [{id: m, input: in, map: {module: %s, function: %s}}]
sinks: [{id: out, input: m, jetstream: {subject: out%d}}]
`, tt.policy, deadLetter, in, faulty, tt.function, i))
			info := ts.wait(job)
			if tt.policy == "fail" {
				if info.State != runtime.StateFailed || !strings.Contains(info.Failure, "function["+tt.function+"]") {
					t.Fatalf("state %s, failure %q", info.State, info.Failure)
				}
				return
			}
			if info.State != runtime.StateFinished {
				t.Fatalf("state %s: %s", info.State, info.Failure)
			}
			got := ts.read(out)
			if len(got) != n-1 {
				t.Fatalf("%d records out, want %d", len(got), n-1)
			}
			for _, m := range got {
				if string(m.Data()) == "poison" {
					t.Fatal("poison record passed")
				}
			}
			var m runtime.VertexInfo
			for _, v := range info.Vertices {
				if v.ID == "m" {
					m = v
				}
			}
			if m.UDFErrors != 1 {
				t.Fatalf("udf errors %d, want 1", m.UDFErrors)
			}
			dead := ts.read(dlq)
			if tt.policy == "skip" {
				if m.Skipped != 1 || len(dead) != 0 {
					t.Fatalf("skipped %d, dead letters %d", m.Skipped, len(dead))
				}
				return
			}
			if m.DeadLettered != 1 || len(dead) != 1 || string(dead[0].Data()) != "poison" {
				t.Fatalf("dead lettered %d, dead letters %d", m.DeadLettered, len(dead))
			}
			if e := dead[0].Headers().Get(operator.HeaderError); !strings.Contains(e, tt.function) {
				t.Fatalf("%s header %q", operator.HeaderError, e)
			}
			if op := dead[0].Headers().Get(operator.HeaderOperator); op != "m" {
				t.Fatalf("%s header %q", operator.HeaderOperator, op)
			}
		})
	}
}

func TestRunawayUDFsFailOnlyTheirJob(t *testing.T) {
	ts := startTestServer(t)
	faulty := ts.upload(wasmbuild.UDF(t, "faulty-wat"))
	ts.stream("SPIN", []string{"spin"}, poisonInput(100, "spin"))
	ts.stream("BOMB", []string{"bomb"}, poisonInput(100, "bomb"))
	ts.stream("FINE", []string{"fine"}, poisonInput(5000, "fine"))
	ts.stream("SINK_FINE", []string{"sink.fine"}, nil)
	ts.stream("SINK_OTHERS", []string{"sink.spin", "sink.bomb"}, nil)
	submit := func(name, stream, function string) string {
		return ts.submit(fmt.Sprintf(`
name: %s
udf: {call_timeout: 300ms, memory_limit: 4194304}
sources: [{id: in, jetstream: {stream: %s, bounded: true}}]
operators: [{id: m, input: in, map: {module: %s, function: %s}}]
sinks: [{id: out, input: m, jetstream: {subject: sink.%s}}]
`, name, stream, faulty, function, name))
	}
	spin := submit("spin", "SPIN", "spin")
	bomb := submit("bomb", "BOMB", "bomb")
	fine := submit("fine", "FINE", "poison")

	if info := ts.wait(spin); info.State != runtime.StateFailed || !strings.Contains(info.Failure, "deadline") {
		t.Fatalf("spin job: %s %q", info.State, info.Failure)
	}
	if info := ts.wait(bomb); info.State != runtime.StateFailed || !strings.Contains(info.Failure, "memory_limit") {
		t.Fatalf("bomb job: %s %q", info.State, info.Failure)
	}
	if info := ts.wait(fine); info.State != runtime.StateFinished {
		t.Fatalf("fine job: %s %q", info.State, info.Failure)
	}
	if status, body := ts.call(http.MethodGet, "/healthz", "", nil); status != http.StatusOK {
		t.Fatalf("healthz %d %s", status, body)
	}
	if got := len(ts.read("SINK_FINE")); got != 5000 {
		t.Fatalf("fine job wrote %d records, want 5000", got)
	}
}
