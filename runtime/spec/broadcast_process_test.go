package spec

import (
	"strings"
	"testing"
)

// broadcastJob is a valid broadcast_process job with op spliced into its
// operator.
func broadcastJob(op string) string {
	return `
name: rules
sources:
  - {id: events, generator: {kind: clicks}}
  - {id: rules, generator: {kind: sequence}}
operators:
  - id: match
    input: events
` + op + `
sinks:
  - {id: out, input: match, discard: true}
`
}

const okBroadcast = `    key_by: {field: user}
    broadcast_process: {broadcast: rules, module: rules, process_element: match, process_broadcast: update}`

func TestBroadcastProcessParses(t *testing.T) {
	j, err := Parse([]byte(broadcastJob(okBroadcast + "\n    on_timer: expire\n    state_ttl: [{state: hits, ttl: 1h}]")))
	if err != nil {
		t.Fatal(err)
	}
	op := j.Operators[0]
	if op.Kind() != "broadcast_process" || op.BroadcastProcess.Broadcast != "rules" || op.OnTimer != "expire" {
		t.Fatalf("parsed %+v", op)
	}
	if got := j.Inputs("match"); strings.Join(got, ",") != "events,rules" {
		t.Fatalf("inputs %q", got)
	}
}

// Each mistake in a broadcast_process operator is a problem at its field.
func TestBroadcastProcessProblems(t *testing.T) {
	tests := []struct {
		op, path, want string
	}{
		{`    broadcast_process: {broadcast: rules, module: rules, process_element: match, process_broadcast: update}`,
			"operators[0].key_by", "required by broadcast_process"},
		{`    key_by: {field: user}
    broadcast_process: {broadcast: rulez, module: rules, process_element: match, process_broadcast: update}`,
			"operators[0].broadcast_process.broadcast", `no source or operator has id "rulez" (did you mean "rules"?)`},
		{`    key_by: {field: user}
    broadcast_process: {broadcast: events, module: rules, process_element: match, process_broadcast: update}`,
			"operators[0].broadcast_process.broadcast", `names the operator's input "events"`},
		{`    key_by: {field: user}
    broadcast_process: {broadcast: out, module: rules, process_element: match, process_broadcast: update}`,
			"operators[0].broadcast_process.broadcast", `"out" is a sink`},
		{`    key_by: {field: user}
    broadcast_process: {broadcast: rules, module: rules, process_element: match, process_broadcast: ""}`,
			"operators[0].broadcast_process.process_broadcast", "required"},
		{`    key_by: {field: user}
    broadcast_process: {broadcast: rules, module: rules, process_element: "", process_broadcast: update}`,
			"operators[0].broadcast_process.process_element", "required"},
		{`    key_by: {field: user}
    broadcast_process: {broadcast: rules, module: "sha256:x", process_element: match, process_broadcast: update}`,
			"operators[0].broadcast_process.module", "want a module id"},
		{okBroadcast + "\n    partition: rebalance", "operators[0].partition", "not with key_by or join"},
		{okBroadcast + "\n    process: {module: rules, function: match}", "operators[0]", "set only one of process, broadcast_process"},
		{"    map: {module: rules, function: m}\n    on_timer: expire", "operators[0].on_timer", "only used with process or broadcast_process"},
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.want, func(t *testing.T) {
			if got := problemAt(t, broadcastJob(tt.op), tt.path); !strings.Contains(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}
