package plan

import (
	"errors"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/spec"
)

// TestCustomEvictorPlan: a custom evictor resolves to its module's
// function of kind evictor, counts as a guest of each subtask and names
// its module; a missing function or one of another kind is a problem at
// the evictor's field.
func TestCustomEvictorPlan(t *testing.T) {
	const mod = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	desc := abi.Description{ABI: 1, Functions: []abi.Function{{Name: "summary", Kind: abi.KindWindowProcess}, {Name: "top2", Kind: abi.KindEvictor}}}
	find := func(id string) (abi.Description, bool) { return desc, id == mod }
	job := func(evictor string) *spec.Job {
		t.Helper()
		j, err := spec.Parse([]byte("name: ev\nparallelism: 3\nsources: [{id: s, generator: {kind: clicks, count: 1}}]\n" +
			"operators: [{id: w, input: s, key_by: {field: user}, window: {type: tumbling, size: 1s, evictor: " + evictor + "}, process_window: {module: \"" + mod + "\", function: summary}}]\n" +
			"sinks: [{id: o, input: w, discard: true}]\n"))
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	for _, tt := range []struct {
		when        string
		after, both bool
	}{{"", false, false}, {"before", false, false}, {"after", true, false}, {"both", false, true}} {
		when := ""
		if tt.when != "" {
			when = ", when: " + tt.when
		}
		p, err := Build(job(`{type: custom, module: "`+mod+`", function: top2`+when+`}`), find)
		if err != nil {
			t.Fatal(err)
		}
		e := p.Vertex("w").Window.Evictor
		want := Evictor{Type: EvictorCustom, After: tt.after, Both: tt.both, Fn: &Func{Module: mod, Function: "top2", Index: 1}}
		if e == nil || e.Fn == nil || *e.Fn != *want.Fn || e.Type != want.Type || e.After != want.After || e.Both != want.Both {
			t.Fatalf("when %q: evictor %+v, want %+v", tt.when, e, want)
		}
		if got := p.Guests(); got != 6 {
			t.Fatalf("guests %d, want 6 (the window function and the evictor in 3 subtasks)", got)
		}
	}
	for _, tt := range []struct{ function, want string }{
		{"nope", `invalid job: operators[0].window.evictor.function: module ` + mod + ` has no function "nope" (it has summary (window_process), top2 (evictor))`},
		{"summary", `invalid job: operators[0].window.evictor.function: "summary" is a window_process function, want evictor`},
	} {
		_, err := Build(job(`{type: custom, module: "`+mod+`", function: `+tt.function+`}`), find)
		if !errors.Is(err, ErrInvalidJob) || err.Error() != tt.want {
			t.Fatalf("error %v, want %q", err, tt.want)
		}
	}
}
