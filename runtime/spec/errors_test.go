package spec

import (
	"errors"
	"strings"
	"testing"
)

// TestErrorMessages checks the whole rendering of problems: messages,
// paths, lines and the joining of several.
func TestErrorMessages(t *testing.T) {
	for _, tc := range []struct {
		name, spec, want string
	}{
		{"unknown field with line", minimalSpec + "udf:\n  batchsize: 3\n",
			`udf.batchsize: unknown field (did you mean "batch_size"?) (line 6)`},
		{"unknown field far from every name", minimalSpec + "colour: red\n",
			"colour: unknown field (line 5)"},
		{"misspelt input", withOps("  - {id: op, input: scr, map: {module: " + modA + ", function: f}}\n"),
			`operators[0].input: no source or operator has id "scr" (did you mean "src"?) (line 4)`},
		{"misspelt late output", "name: j\n" + src + "operators:\n  - {id: op, input: src, key_by: {field: k}, window: {type: tumbling, size: 1m}, aggregate: {builtin: count}, late_output: lates}\n" +
			"sinks: [{id: out, input: op, discard: true}, {id: late, discard: true}]\n",
			`operators[0].late_output: no sink has id "lates" (did you mean "late"?) (line 4); ` +
				"sinks[1].input: required unless an operator's late_output names this sink (line 5)"},
		{"misspelt enum", minimalSpec + "time: evnet\n",
			`time: must be one of event, processing, ingestion; got "evnet" (did you mean "event"?) (line 5)`},
		{"wrong type", minimalSpec + "operators: {}\n",
			"operators: want a list, got an object (line 5)"},
		{"custom tag", "name: !custom j\n" + src + out,
			"name: want a string, got a value tagged !custom (line 1)"},
		{"invalid duration", minimalSpec + "buffer_timeout: 5x\n",
			`buffer_timeout: invalid duration "5x" (line 5)`},
		{"duplicate key", minimalSpec + "name: k\n",
			"name: duplicate key, first on line 2 (line 5)"},
		{"yaml syntax", "name: j\n  bad: [\n",
			"invalid YAML: mapping values are not allowed in this context (line 2)"},
		{"json syntax", "{\n\"name\": \"j\",\n\"sources\" []\n}",
			"invalid JSON: invalid character '[' after object key (line 3)"},
		{"several, joined", "name: j\nsources: []\nsinks: []\n",
			"sources: at least one source is required (line 2); sinks: at least one sink is required (line 3)"},
		{"validation line is the nearest given field", "name: j\n" + src + "sinks:\n  - id: out\n    input: src\n    jetstream:\n      max_in_flight: 1\n",
			"sinks[0].jetstream.subject: required (line 6)"},
		{"aliases expanded beyond the budget", "name: j\nl: &l [" + strings.Repeat("a,", 400) + "a]\n" +
			"s: &s {id: s, jetstream: {stream: S, subjects: *l}}\nsources: [" + strings.Repeat("*s,", 400) + "*s]\n" + out,
			"the spec holds more than 100000 values (YAML aliases expanded)"},
		{"cycle", withOps("  - {id: op, input: x, map: {module: " + modA + ", function: f}}\n  - {id: x, input: op, filter: {module: " + modA + ", function: f}}\n"),
			"operators[0]: cycle: op -> x -> op (line 4)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.spec))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want *Error", err)
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
		})
	}
}

func TestFieldErrorString(t *testing.T) {
	for _, tc := range []struct {
		e    FieldError
		want string
	}{
		{FieldError{Path: "a.b", Message: "bad"}, "a.b: bad"},
		{FieldError{Path: "a[0]", Message: "bad", Line: 3}, "a[0]: bad (line 3)"},
		{FieldError{Message: "empty"}, "empty"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%#v: got %q, want %q", tc.e, got, tc.want)
		}
	}
}

func TestClosest(t *testing.T) {
	names := []string{"parallelism", "max_parallelism", "time", "sources", "sinks", "input", "id"}
	for _, tc := range []struct{ word, want string }{
		{"paralelism", "parallelism"},
		{"parallelsim", "parallelism"},
		{"max_paralellism", "max_parallelism"},
		{"tim", "time"},
		{"inptu", "input"},
		{"sink", "sinks"},
		{"source", "sources"},
		{"ix", "id"},
		{"colour", ""},
		{"", ""},
		{"time", ""},
		{"threads", ""},
	} {
		if got := closest(tc.word, names); got != tc.want {
			t.Errorf("closest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"a", "", 1}, {"abc", "acb", 1}, {"kitten", "sitting", 3}, {"µs", "us", 1}} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
