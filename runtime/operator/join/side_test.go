package join

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
)

// TestIntervalJoinSideOutputs runs udfs/triage's join function (match) in
// an interval join: a pair of a large order goes to the side output large
// with the later of the pair's timestamps, as a result would; the others
// are results; watermarks reach every output; late records are the output
// late; a tag the operator does not declare fails its group.
func TestIntervalJoinSideOutputs(t *testing.T) {
	jp := plan.Join{Interval: true, Lower: -5, Upper: 5}
	steps := []optest.JoinStep{`L a@10 {"amount":950}; b@10 {"amount":2}`, "R a@12 p; b@8 q", "wm 20", "L a@3 {\"amount\":7}", "wm max"}
	tests := []struct {
		name     string
		declared []string
		mode     string
		// want are the lines of the results, then of each declared
		// output, then of the late output.
		want    [][]string
		skipped int64
	}{
		{
			name:     "declared",
			declared: []string{"large"},
			mode:     operator.OnErrorFail,
			want: [][]string{
				{`b@10 {"amount":2}|q`, "wm 20", "wm max"},
				{`a@12 {"amount":950}|p`, "wm 20", "wm max"},
				{"wm 20", `a@3 {"amount":7}`, "wm max"},
			},
		},
		{
			name: "undeclared",
			mode: operator.OnErrorSkip,
			want: [][]string{
				{`b@10 {"amount":2}|q`, "wm 20", "wm max"},
				{"wm 20", `a@3 {"amount":7}`, "wm max"},
			},
			skipped: 1,
		},
	}
	mod := optest.Module(t, "triage")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tapes, stages := optest.SideTapes(len(tc.declared))
			late := tapes[len(tapes)-1]
			c := newCounters()
			in := &operator.Inputs{Split: 1}
			call := optest.GroupCall(t, mod, "match")
			j := New(Config{
				Vertex: "j", Plan: &jp, Inputs: in, Limit: 1 << 20, BatchSize: 2, Next: tapes[0], Late: late, LateCount: &c.late,
				Policy: &operator.ErrorPolicy{Mode: tc.mode, Vertex: "j", Counts: &c.ErrorCounts, Log: slog.New(slog.NewTextHandler(io.Discard, nil))},
				Sides:  operator.NewSideOutputs("j", 2, tc.declared, stages),
				Fn:     &call,
			})
			t.Cleanup(func() { _ = j.Close(context.Background()) })
			for _, st := range steps {
				if err := st.Apply(context.Background(), j, in); err != nil {
					t.Fatalf("step %q: %v", st, err)
				}
			}
			for i, tape := range tapes {
				optest.CheckLines(t, "output "+string(rune('0'+i)), tape.Lines, tc.want[i])
			}
			if got := c.Skipped.Load(); got != tc.skipped {
				t.Fatalf("skipped %d, want %d", got, tc.skipped)
			}
		})
	}
}
