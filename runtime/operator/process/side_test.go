package process

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/state"
)

// TestProcessSideOutputs runs udfs/triage's process function: orders go to
// the main output or to the side outputs large and invalid, as declared,
// each with the key and event time of its order; watermarks reach every
// output; a tag the operator does not declare fails its record under
// on_udf_error, and so drops what that record emitted.
func TestProcessSideOutputs(t *testing.T) {
	steps := []optest.Step{
		`a@1 {"amount":5}; b@2 {"amount":950}; c@3 {"amount":"x"}`,
		"wm 3",
		`d@4 {"amount":901}; e@5 {"amount":899}`,
		"wm max",
	}
	tests := []struct {
		name     string
		declared []string
		mode     string
		// want are the lines of the main output, then of each declared
		// output; skipped the records on_udf_error skipped.
		want    [][]string
		skipped int64
		err     string
	}{
		{
			name:     "every tag declared",
			declared: []string{"large", "invalid"},
			mode:     operator.OnErrorFail,
			want: [][]string{
				{`a@1 {"amount":5}`, "wm 3", `e@5 {"amount":899}`, "wm max"},
				{`b@2 {"amount":950}`, "wm 3", `d@4 {"amount":901}`, "wm max"},
				{`c@3 {"amount":"x"}`, "wm 3", "wm max"},
			},
		},
		{
			name:     "an undeclared tag skips its record",
			declared: []string{"large"},
			mode:     operator.OnErrorSkip,
			want: [][]string{
				{`a@1 {"amount":5}`, "wm 3", `e@5 {"amount":899}`, "wm max"},
				{`b@2 {"amount":950}`, "wm 3", `d@4 {"amount":901}`, "wm max"},
			},
			skipped: 1,
		},
		{
			name:     "an undeclared tag fails the job under fail",
			declared: []string{"large"},
			mode:     operator.OnErrorFail,
			err:      `side output "invalid" is not declared: operator "op"'s side_outputs are large`,
		},
		{
			name: "no side outputs at all",
			mode: operator.OnErrorFail,
			err:  `side output "large" is not declared: the operator has no side_outputs`,
		},
	}
	mod := optest.Module(t, "triage")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			main := &optest.Tape{}
			tapes := []*optest.Tape{main}
			var stages []operator.Stage
			for range tc.declared {
				tape := &optest.Tape{}
				tapes = append(tapes, tape)
				stages = append(stages, tape)
			}
			op, counts := sideProcessOp(t, mod, tc.mode, main)
			op.SetSideOutputs(operator.NewSideOutputs("op", 2, tc.declared, stages))
			var err error
			for _, st := range steps {
				if err = st.Apply(context.Background(), op); err != nil {
					break
				}
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, tape := range tapes {
				optest.CheckLines(t, "output "+string(rune('0'+i)), tape.Lines, tc.want[i])
			}
			if got := counts.Skipped.Load(); got != tc.skipped {
				t.Fatalf("skipped %d, want %d", got, tc.skipped)
			}
		})
	}
}

// sideProcessOp is a process operator over triage's function at
// parallelism 1 under on_udf_error mode.
func sideProcessOp(t *testing.T, mod *host.Module, mode string, next operator.Stage) (*Operator, *operator.ErrorCounts) {
	t.Helper()
	keyed, err := state.Open(state.Config{MaxParallelism: 128, Range: state.RangeOf(128, 1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	counts := &operator.ErrorCounts{}
	policy := &operator.ErrorPolicy{Mode: mode, Vertex: "op", Counts: counts, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	call := optest.GroupCall(t, mod, "triage")
	op := New("op", call, nil, keyed, 1024, policy, next)
	t.Cleanup(func() { _ = op.Close(context.Background()) })
	return op, counts
}
