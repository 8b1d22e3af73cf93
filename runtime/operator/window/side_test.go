package window

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
)

// TestWindowSideOutputs runs udfs/triage's window process function (tally)
// and window join function (match) with side outputs: a side record
// inherits the window's key and end - 1, as results do, watermarks reach
// every output, late records are the output late, and a tag the operator
// does not declare loses that window's result under on_udf_error.
func TestWindowSideOutputs(t *testing.T) {
	tumbling := plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, FnKind: "window_process"}
	tests := []struct {
		name     string
		function string
		join     bool
		declared []string
		mode     string
		steps    []optest.JoinStep
		// want are the lines of the results, then of each declared
		// output, then of the late output.
		want    [][]string
		skipped int64
	}{
		{
			name:     "window process: large orders and late records",
			function: "tally",
			declared: []string{"large"},
			mode:     operator.OnErrorFail,
			steps:    []optest.JoinStep{`a@1 {"amount":950}; a@2 {"amount":3}; b@5 {"amount":1}`, "wm 9", `a@3 {"amount":999}`, `a@12 {"amount":901}`, "wm max"},
			want: [][]string{
				{"a@9 2", "b@9 1", "wm 9", "a@19 1", "wm max"},
				{`a@9 {"amount":950}`, "wm 9", `a@19 {"amount":901}`, "wm max"},
				{"wm 9", `a@3 {"amount":999}`, "wm max"},
			},
		},
		{
			name:     "window process: an undeclared tag skips the window",
			function: "tally",
			mode:     operator.OnErrorSkip,
			steps:    []optest.JoinStep{`a@1 {"amount":950}; b@5 {"amount":1}`, "wm max"},
			want:     [][]string{{"b@9 1", "wm max"}, {"wm max"}},
			skipped:  1,
		},
		{
			name:     "window join: large pairs",
			function: "match",
			join:     true,
			declared: []string{"large"},
			mode:     operator.OnErrorFail,
			steps:    []optest.JoinStep{`L a@1 {"amount":950}; a@2 {"amount":3}`, "R a@4 p; b@5 q", "wm max"},
			want: [][]string{
				{`a@9 {"amount":3}|p`, "wm max"},
				{`a@9 {"amount":950}|p`, "wm max"},
				{"wm max"},
			},
		},
	}
	mod := optest.Module(t, "triage")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tapes, stages := optest.SideTapes(len(tc.declared))
			late := tapes[len(tapes)-1]
			counts := &operator.ErrorCounts{}
			wp := tumbling
			in := &operator.Inputs{Split: 1}
			cfg := Config{
				Vertex: "w", Plan: &wp, BatchSize: 2, Next: tapes[0], Late: late, LateCount: &atomic.Int64{},
				Policy: &operator.ErrorPolicy{Mode: tc.mode, Vertex: "w", Counts: counts, Log: slog.New(slog.NewTextHandler(io.Discard, nil))},
				Sides:  operator.NewSideOutputs("w", 2, tc.declared, stages),
			}
			call := optest.GroupCall(t, mod, tc.function)
			cfg.Fn = &call
			if tc.join {
				wp.FnKind = "join"
				cfg.Join = &JoinConfig{Inputs: in}
			}
			op := New(cfg)
			t.Cleanup(func() { _ = op.Close(context.Background()) })
			for _, st := range tc.steps {
				if err := st.Apply(context.Background(), op, in); err != nil {
					t.Fatalf("step %q: %v", st, err)
				}
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
