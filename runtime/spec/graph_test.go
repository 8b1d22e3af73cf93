package spec

import (
	"slices"
	"testing"
)

func TestGraph(t *testing.T) {
	j := mustParse(t, designSpec)
	for _, tc := range []struct {
		id     string
		kind   string
		ok     bool
		inputs []string
	}{
		{"clicks", KindSource, true, nil},
		{"parse", KindOperator, true, []string{"clicks"}},
		{"attribute", KindOperator, true, []string{"parse", "impressions"}},
		{"out", KindSink, true, []string{"per_user"}},
		{"late", KindSink, true, []string{"per_user"}},
		{"missing", "", false, nil},
	} {
		kind, ok := j.Node(tc.id)
		if kind != tc.kind || ok != tc.ok {
			t.Errorf("Node(%q) = %q, %v; want %q, %v", tc.id, kind, ok, tc.kind, tc.ok)
		}
		if got := j.Inputs(tc.id); !slices.Equal(got, tc.inputs) {
			t.Errorf("Inputs(%q) = %q, want %q", tc.id, got, tc.inputs)
		}
	}
}

func TestOperatorKind(t *testing.T) {
	f := &FunctionRef{Module: modA, Function: "f"}
	for _, tc := range []struct {
		op   Operator
		want string
	}{
		{Operator{Map: f}, "map"},
		{Operator{Filter: f}, "filter"},
		{Operator{FlatMap: f}, "flat_map"},
		{Operator{Aggregate: &Aggregate{Builtin: "count"}}, "aggregate"},
		{Operator{Reduce: f}, "reduce"},
		{Operator{ProcessWindow: f}, "process_window"},
		{Operator{Process: f}, "process"},
		{Operator{Join: &Join{}}, "join"},
		{Operator{}, ""},
	} {
		if got := tc.op.Kind(); got != tc.want {
			t.Errorf("Kind() = %q, want %q", got, tc.want)
		}
	}
}
