package spec

import (
	"errors"
	"strings"
	"testing"
)

// sideJob is a job whose process operator "p" declares outputs and whose
// window operator "w" has late records; tail adds operators and sinks.
func sideJob(outputs, tail string) string {
	return "name: j\n" + src + "operators:\n" +
		"  - {id: p, input: src, key_by: {field: k}, process: {module: \"" + modA + "\", function: f}" + outputs + "}\n" +
		"  - {id: w, input: p, key_by: {field: k}, window: {type: tumbling, size: 1s}, aggregate: {builtin: count}}\n" +
		"  - {id: m, input: w, map: {module: \"" + modA + "\", function: g}}\n" + tail
}

func TestSideOutputSpecs(t *testing.T) {
	const main = "sinks:\n  - {id: out, input: m, discard: true}\n"
	for _, tc := range []struct {
		name string
		spec string
		// path and message of the one problem; empty: the spec is valid.
		path, msg string
	}{
		{"sink reads a declared output", sideJob(", side_outputs: [alerts]", main+"  - {id: a, input: p.alerts, discard: true}\n"), "", ""},
		{"operator reads a declared output", sideJob(", side_outputs: [alerts]",
			"  - {id: n, input: p.alerts, map: {module: \""+modA+"\", function: g}}\n"+main+"  - {id: a, input: n, discard: true}\n"), "", ""},
		{"late records by input", sideJob("", main+"  - {id: l, input: w.late, discard: true}\n"), "", ""},
		{"late records by late_output", strings.Replace(sideJob("", main+"  - {id: l, discard: true}\n"),
			"aggregate: {builtin: count}", "aggregate: {builtin: count}, late_output: l", 1), "", ""},
		{"unread output", sideJob(", side_outputs: [alerts, rejected]", main+"  - {id: a, input: p.alerts, discard: true}\n"),
			"operators[0].side_outputs[1]", `no operator or sink reads side output "rejected": set an input to "p.rejected"`},
		{"undeclared output", sideJob(", side_outputs: [alerts]", main+"  - {id: a, input: p.alerts, discard: true}\n  - {id: b, input: p.alert, discard: true}\n"),
			"sinks[2].input", `operator "p" has no side output "alert": its side_outputs are alerts (did you mean "alerts"?)`},
		{"no outputs declared", sideJob("", main+"  - {id: a, input: p.alerts, discard: true}\n"),
			"sinks[1].input", `operator "p" has no side output "alerts": it declares none in side_outputs`},
		{"late of a process operator", sideJob("", main+"  - {id: a, input: p.late, discard: true}\n"),
			"sinks[1].input", `operator "p" has no late records`},
		{"late declared", sideJob(", side_outputs: [late]", main),
			"operators[0].side_outputs[0]", `"late" is reserved`},
		{"dotted name", sideJob(", side_outputs: [a.b]", main),
			"operators[0].side_outputs[0]", `want 1 to 64 letters, digits, '-' and '_', got "a.b"`},
		{"duplicate name", sideJob(", side_outputs: [a, a]", main+"  - {id: s, input: p.a, discard: true}\n"),
			"operators[0].side_outputs[1]", `duplicate side output "a"`},
		{"output of a built-in aggregate", strings.Replace(sideJob("", main), "aggregate: {builtin: count}", "aggregate: {builtin: count}, side_outputs: [x]", 1),
			"operators[1].side_outputs", "only a process, process_window or join function (or co_group) writes side outputs"},
		{"ambiguous input", sideJob("", "  - {id: w.late, input: m, map: {module: \""+modA+"\", function: g}}\n"+
			"sinks:\n  - {id: out, input: w.late, discard: true}\n"),
			"sinks[0].input", `"w.late" is both a vertex's id and the side output "late" of operator "w"`},
		{"cycle through a side output", "name: j\n" + src + "operators:\n" +
			"  - {id: a, input: b.x, key_by: {field: k}, process: {module: \"" + modA + "\", function: f}, side_outputs: [x]}\n" +
			"  - {id: b, input: a.x, key_by: {field: k}, process: {module: \"" + modA + "\", function: f}, side_outputs: [x]}\n" +
			"sinks:\n  - {id: out, input: src, discard: true}\n", "operators[0]", "cycle: a -> b -> a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.spec))
			if tc.path == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || len(e.Problems) != 1 {
				t.Fatalf("want one problem at %s, got %v", tc.path, err)
			}
			if p := e.Problems[0]; p.Path != tc.path || !strings.Contains(p.Message, tc.msg) {
				t.Fatalf("got %s: %s\nwant %s: ...%s...", p.Path, p.Message, tc.path, tc.msg)
			}
		})
	}
}

// TestInputStreams: an input that reads a side output stands for its
// operator in the graph.
func TestInputStreams(t *testing.T) {
	j := mustParse(t, sideJob(", side_outputs: [alerts]", "sinks:\n  - {id: out, input: m, discard: true}\n  - {id: a, input: p.alerts, discard: true}\n  - {id: l, input: w.late, discard: true}\n"))
	for _, tc := range []struct{ input, vertex, output string }{
		{"p", "p", ""},
		{"p.alerts", "p", "alerts"},
		{"w.late", "w", "late"},
		{"src", "src", ""},
		{"nowhere.x", "nowhere.x", ""},
	} {
		if v, o := j.Stream(tc.input); v != tc.vertex || o != tc.output {
			t.Errorf("Stream(%q) = %q, %q; want %q, %q", tc.input, v, o, tc.vertex, tc.output)
		}
	}
	for _, tc := range []struct {
		id   string
		want string
	}{{"a", "p"}, {"l", "w"}} {
		if got := j.Inputs(tc.id); len(got) != 1 || got[0] != tc.want {
			t.Errorf("Inputs(%q) = %q, want [%q]", tc.id, got, tc.want)
		}
	}
}
