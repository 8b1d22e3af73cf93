package broadcast

import (
	"bytes"
	"testing"

	"wasmstream.io/platform/runtime/operator/optest"
)

// rulesModules are the rules module in every language it is written in.
var rulesModules = []string{"rules", "rules-c", "rules-rust", "rules-as"}

// TestRulesAcrossLanguages runs the rules example of every SDK language
// through the operator: each gives exactly the Go module's output for rules
// changing mid-stream, and a snapshot whose broadcast states are byte for
// byte the Go module's.
func TestRulesAcrossLanguages(t *testing.T) {
	var goSection []byte
	for _, module := range rulesModules {
		t.Run(module, func(t *testing.T) {
			tape := &optest.Tape{}
			op, in := newOp(t, opConfig{module: module, process: "match", broadcast: "update", p: 1}, tape)
			if err := run(t, op, in, rulesSteps); err != nil {
				t.Fatal(err)
			}
			optest.CheckLines(t, "output", tape.Lines, rulesWant)
			section := appendSection(nil, op.store.capture())
			if module == "rules" {
				goSection = section
			} else if !bytes.Equal(section, goSection) {
				t.Fatalf("broadcast states %q, want the Go module's %q", section, goSection)
			}
			snap := snapshotBytes(t, op)
			if !bytes.HasPrefix(snap, section) {
				t.Fatal("the snapshot does not start with the broadcast states")
			}
		})
	}
}
