package window

import (
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
)

// counters are what a test reads back from an operator: the records too
// late for every window, and the failed ones.
type counters struct {
	late atomic.Int64
	operator.ErrorCounts
}

func newCounters() *counters { return &counters{} }

// testWindow builds a window operator with a built-in aggregate, or fn,
// writing its results to out and its late records to late (when not nil).
func testWindow(wp *plan.Window, fn func(w *Operator, out *operator.Out, policy *operator.ErrorPolicy) windowFunc, out, late *optest.Tape) (*Operator, *counters) {
	c := newCounters()
	policy := &operator.ErrorPolicy{Mode: operator.OnErrorFail, Vertex: "win", Counts: &c.ErrorCounts, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	wo := &operator.Out{Max: 4, Next: out}
	var lateStage operator.Stage
	if late != nil {
		lateStage = late
	}
	w := newWindowOp("win", wp, &c.late, policy, wo, lateStage)
	if fn == nil {
		w.fn = &builtinFunc{name: wp.Builtin, field: wp.Field, policy: policy, out: wo}
	} else {
		w.fn = fn(w, wo, policy)
	}
	return w, c
}

func TestWindowBuiltinGolden(t *testing.T) {
	tests := []struct {
		name  string
		plan  plan.Window
		steps []optest.Step
		want  []string
		late  []string
		// dropped is the count of too-late records.
		dropped int64
	}{
		{
			name: "tumbling count out of order",
			plan: plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Builtin: builtinCount},
			steps: []optest.Step{
				"a@3 {}; b@12 {}; a@1 {}; a@11 {}", "a@9 {}", "wm 9", "b@10 {}", "wm 19", "wm max",
			},
			want: []string{
				`a@9 {"key":"a","window_start":0,"window_end":10,"value":3}`, "wm 9",
				`b@19 {"key":"b","window_start":10,"window_end":20,"value":2}`,
				`a@19 {"key":"a","window_start":10,"window_end":20,"value":1}`, "wm 19", "wm max",
			},
		},
		{
			name: "tumbling with offset, sum avg",
			plan: plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Offset: 5, Builtin: builtinSum, Field: "n"},
			steps: []optest.Step{
				`k@4 {"n":1}; k@5 {"n":2.5}; k@14 {"n":-3}; k@15 {"n":4}`, "wm max",
			},
			want: []string{
				`k@4 {"key":"k","window_start":-5,"window_end":5,"value":1}`,
				`k@14 {"key":"k","window_start":5,"window_end":15,"value":-0.5}`,
				`k@24 {"key":"k","window_start":15,"window_end":25,"value":4}`, "wm max",
			},
		},
		{
			name: "sliding min max share panes",
			plan: plan.Window{Type: plan.WindowSliding, Size: 10, Slide: 5, Builtin: builtinMax, Field: "n"},
			steps: []optest.Step{
				`k@1 {"n":1}; k@7 {"n":7}; k@12 {"n":3}`, "wm 9", "wm 14", "wm max",
			},
			want: []string{
				`k@4 {"key":"k","window_start":-5,"window_end":5,"value":1}`,
				`k@9 {"key":"k","window_start":0,"window_end":10,"value":7}`, "wm 9",
				`k@14 {"key":"k","window_start":5,"window_end":15,"value":7}`, "wm 14",
				`k@19 {"key":"k","window_start":10,"window_end":20,"value":3}`, "wm max",
			},
		},
		{
			name: "lateness: on time, late within lateness re-fires, too late goes to the side",
			plan: plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Lateness: 5, Builtin: builtinCount},
			steps: []optest.Step{
				"k@1 a; k@2 b", "wm 9", "k@3 c", "k@4 d; k@5 e", "wm 13", "k@6 f", "wm 14", "k@7 g", "wm max",
			},
			want: []string{
				`k@9 {"key":"k","window_start":0,"window_end":10,"value":2}`, "wm 9",
				`k@9 {"key":"k","window_start":0,"window_end":10,"value":3}`,
				`k@9 {"key":"k","window_start":0,"window_end":10,"value":4}`,
				`k@9 {"key":"k","window_start":0,"window_end":10,"value":5}`, "wm 13",
				`k@9 {"key":"k","window_start":0,"window_end":10,"value":6}`, "wm 14", "wm max",
			},
			late:    []string{"wm 9", "wm 13", "wm 14", "k@7 g", "wm max"},
			dropped: 1,
		},
		{
			name: "late without lateness",
			plan: plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Builtin: builtinCount},
			steps: []optest.Step{
				"k@1 a", "wm 9", "k@9 b; k@10 c", "wm max",
			},
			want: []string{
				`k@9 {"key":"k","window_start":0,"window_end":10,"value":1}`, "wm 9",
				`k@19 {"key":"k","window_start":10,"window_end":20,"value":1}`, "wm max",
			},
			late:    []string{"wm 9", "k@9 b", "wm max"},
			dropped: 1,
		},
		{
			name: "window_all ignores keys",
			plan: plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, All: true, Builtin: builtinAvg, Field: "n"},
			steps: []optest.Step{
				`a@1 {"n":1}; b@2 {"n":2}`, "wm max",
			},
			want: []string{`@9 {"key":"","window_start":0,"window_end":10,"value":1.5}`, "wm max"},
		},
		{
			name: "session merge",
			plan: plan.Window{Type: plan.WindowSession, Gap: 5, Builtin: builtinCount},
			steps: []optest.Step{
				"k@0 a; k@20 b; j@0 x", "k@10 c", "k@5 d", "wm 30", "wm max",
			},
			want: []string{
				`j@4 {"key":"j","window_start":0,"window_end":5,"value":1}`,
				`k@14 {"key":"k","window_start":0,"window_end":15,"value":3}`,
				`k@24 {"key":"k","window_start":20,"window_end":25,"value":1}`, "wm 30", "wm max",
			},
		},
		{
			name: "session late within lateness re-fires the merged session",
			plan: plan.Window{Type: plan.WindowSession, Gap: 5, Lateness: 10, Builtin: builtinCount},
			steps: []optest.Step{
				"k@0 a", "wm 10", "k@4 b", "k@12 c", "wm 30", "k@3 late; k@20 d", "wm max",
			},
			want: []string{
				`k@4 {"key":"k","window_start":0,"window_end":5,"value":1}`, "wm 10",
				`k@8 {"key":"k","window_start":0,"window_end":9,"value":2}`,
				`k@16 {"key":"k","window_start":12,"window_end":17,"value":1}`, "wm 30",
				`k@24 {"key":"k","window_start":20,"window_end":25,"value":1}`, "wm max",
			},
			dropped: 1,
		},
		{
			name: "tumbling count window",
			plan: plan.Window{Type: plan.WindowCount, Count: 3, CountSlide: 3, Builtin: builtinSum, Field: "n"},
			steps: []optest.Step{
				`k@5 {"n":1}; k@3 {"n":2}; j@1 {"n":9}; k@9 {"n":3}; k@1 {"n":4}`, `k@2 {"n":5}; k@4 {"n":6}`, "wm max",
			},
			want: []string{
				`k@9 {"key":"k","window_start":3,"window_end":10,"value":6}`,
				`k@4 {"key":"k","window_start":1,"window_end":5,"value":15}`, "wm max",
			},
		},
		{
			name: "sliding count window",
			plan: plan.Window{Type: plan.WindowCount, Count: 4, CountSlide: 2, Builtin: builtinCount},
			steps: []optest.Step{
				"k@1 a; k@2 b; k@3 c", "k@4 d; k@5 e; k@6 f; k@7 g", "wm max",
			},
			want: []string{
				`k@2 {"key":"k","window_start":1,"window_end":3,"value":2}`,
				`k@4 {"key":"k","window_start":1,"window_end":5,"value":4}`,
				`k@6 {"key":"k","window_start":3,"window_end":7,"value":4}`, "wm max",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := &optest.Tape{}
			var late *optest.Tape
			if tt.late != nil {
				late = &optest.Tape{}
			}
			w, c := testWindow(&tt.plan, nil, out, late)
			optest.Run(t, w, tt.steps)
			optest.CheckLines(t, "results", out.Lines, tt.want)
			if late != nil {
				optest.CheckLines(t, "late output", late.Lines, tt.late)
			}
			if got := c.late.Load(); got != tt.dropped {
				t.Fatalf("late records %d, want %d", got, tt.dropped)
			}
			if w.store.keys() != 0 && tt.plan.Type != plan.WindowCount {
				t.Fatalf("%d keys left after the end of input", w.store.keys())
			}
		})
	}
}
