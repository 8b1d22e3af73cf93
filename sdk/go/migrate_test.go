package udf

import (
	"testing"

	"wasmstream.io/platform/abi"
)

// A retired state is described as such, beside the migrate_state function
// that converts it, and the description parses.
func TestDescribeMigration(t *testing.T) {
	var g registry
	run := func(*caller, []byte) []byte { return nil }
	g.add(function{name: "p", kind: abi.KindProcess, run: run})
	g.add(function{name: "m", kind: abi.KindMigrateState, run: run})
	g.declare("seen", abi.StateValue, []StateOption{Retired()})
	g.declare("marks", abi.StateMap, nil)
	want := `{"abi":1,"functions":[{"name":"p","kind":"process"},{"name":"m","kind":"migrate_state"}],"states":[{"name":"seen","kind":"value","retired":true},{"name":"marks","kind":"map"}]}`
	if got := string(g.describe()); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	d, err := abi.ParseDescription(g.describe())
	if err != nil {
		t.Fatal(err)
	}
	if d.MigrateFunction() != 1 || len(d.RetiredStates()) != 1 || d.RetiredStates()[0] != 0 {
		t.Fatalf("parsed %+v", d)
	}
}
