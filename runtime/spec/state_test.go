package spec

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestKeyedStateFields(t *testing.T) {
	proc := "  - {id: op, input: src, key_by: {field: k}, process: {module: " + modA + ", function: p}"
	j := mustParse(t, withOps(proc+", on_timer: t, state_ttl: [{state: seen, ttl: 1h, update_type: on_read_and_write, visibility: return_expired_if_not_cleaned_up}, {state: other, ttl: 0s}]}\n"))
	op := j.Operators[0]
	want := []StateTTL{
		{State: "seen", TTL: Duration{time.Hour}, UpdateType: "on_read_and_write", Visibility: "return_expired_if_not_cleaned_up"},
		{State: "other"},
	}
	if op.OnTimer != "t" || !reflect.DeepEqual(op.StateTTL, want) {
		t.Fatalf("parsed %+v", op)
	}
	tests := []struct {
		name  string
		spec  string
		paths []string
	}{
		{"on_timer without process", withOps("  - {id: op, input: src, map: {module: " + modA + ", function: m}, on_timer: t}\n"),
			[]string{"operators[0].on_timer"}},
		{"state_ttl without keyed state", withOps("  - {id: op, input: src, map: {module: " + modA + ", function: m}, state_ttl: [{state: s, ttl: 1s}]}\n"),
			[]string{"operators[0].state_ttl"}},
		{"bad state_ttl", withOps(proc + ", state_ttl: [{ttl: -1s, update_type: always, visibility: maybe}, {state: s}, {state: s}]}\n"),
			[]string{"operators[0].state_ttl[0].state", "operators[0].state_ttl[0].ttl", "operators[0].state_ttl[0].update_type",
				"operators[0].state_ttl[0].visibility", "operators[0].state_ttl[2].state"}},
		{"unknown state_ttl field", withOps(proc + ", state_ttl: [{state: s, cleanup: 5}]}\n"),
			[]string{"operators[0].state_ttl[0].cleanup"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.spec))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got error %v, want *Error", err)
			}
			var got []string
			for _, p := range e.Problems {
				got = append(got, p.Path)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.paths) {
				t.Fatalf("paths %q, want %q; error: %v", got, tc.paths, err)
			}
		})
	}
}
