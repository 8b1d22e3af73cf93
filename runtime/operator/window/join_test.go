package window

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
)

func testWindowJoin(wp *plan.Window, out, late *optest.Tape) (*Operator, *operator.Inputs, *counters) {
	c := newCounters()
	policy := &operator.ErrorPolicy{Mode: operator.OnErrorFail, Vertex: "join", Counts: &c.ErrorCounts, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	wo := &operator.Out{Max: 2, Next: out}
	var lateStage operator.Stage
	if late != nil {
		lateStage = late
	}
	in := &operator.Inputs{Split: 1}
	w := newWindowOp("join", wp, &c.late, policy, wo, lateStage)
	w.fn = &windowJoinFunc{inputs: in, store: w.store, out: wo}
	return w, in, c
}

func TestWindowJoinGolden(t *testing.T) {
	tumbling := plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10}
	tests := []struct {
		name     string
		plan     plan.Window
		steps    []optest.JoinStep
		want     []string
		wantLate []string
		lateN    int64
	}{
		{
			name:  "tumbling: pairs of a key within a window, every left with every right",
			plan:  tumbling,
			steps: []optest.JoinStep{"L a@0 1; a@9 2; b@5 3", "R a@9 4; a@10 5; c@5 6", "L a@19 7", "wm 9", "wm max"},
			want: []string{
				`a@9 {"key":"a","window_start":0,"window_end":10,"left":1,"right":4}`,
				`a@9 {"key":"a","window_start":0,"window_end":10,"left":2,"right":4}`,
				"wm 9",
				`a@19 {"key":"a","window_start":10,"window_end":20,"left":7,"right":5}`,
				"wm max",
			},
		},
		{
			name:  "tumbling: an empty side emits nothing",
			plan:  tumbling,
			steps: []optest.JoinStep{"L a@1 1; a@2 2", "R b@3 3", "wm max"},
			want:  []string{"wm max"},
		},
		{
			name:  "sliding: a pair in two windows is emitted for each, panes in time order",
			plan:  plan.Window{Type: plan.WindowSliding, Size: 10, Slide: 5},
			steps: []optest.JoinStep{"L a@7 1", "R a@8 2", "R a@3 3", "wm max"},
			want: []string{
				`a@9 {"key":"a","window_start":0,"window_end":10,"left":1,"right":3}`,
				`a@9 {"key":"a","window_start":0,"window_end":10,"left":1,"right":2}`,
				`a@14 {"key":"a","window_start":5,"window_end":15,"left":1,"right":2}`,
				"wm max",
			},
		},
		{
			name:  "session: sessions merge across both sides",
			plan:  plan.Window{Type: plan.WindowSession, Gap: 5},
			steps: []optest.JoinStep{"L a@1 1", "R a@10 2", "R a@5 3", "L a@30 4", "wm max"},
			want: []string{
				`a@14 {"key":"a","window_start":1,"window_end":15,"left":1,"right":2}`,
				`a@14 {"key":"a","window_start":1,"window_end":15,"left":1,"right":3}`,
				"wm max",
			},
		},
		{
			name:     "late records of either side go to the late output",
			plan:     tumbling,
			steps:    []optest.JoinStep{"L a@1 1", "R a@2 2", "wm 9", "L a@3 3", "R a@9 4; a@10 5", "wm max"},
			want:     []string{`a@9 {"key":"a","window_start":0,"window_end":10,"left":1,"right":2}`, "wm 9", "wm max"},
			wantLate: []string{"wm 9", "a@3 3", "a@9 4", "wm max"},
			lateN:    2,
		},
		{
			name:  "within the allowed lateness a window fires again with every pair",
			plan:  plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Lateness: 5},
			steps: []optest.JoinStep{"L a@1 1", "R a@2 2", "wm 9", "L a@3 3", "wm 14", "R a@4 4", "wm max"},
			want: []string{
				`a@9 {"key":"a","window_start":0,"window_end":10,"left":1,"right":2}`,
				"wm 9",
				`a@9 {"key":"a","window_start":0,"window_end":10,"left":1,"right":2}`,
				`a@9 {"key":"a","window_start":0,"window_end":10,"left":3,"right":2}`,
				"wm 14",
				"wm max",
			},
			wantLate: []string{"wm 9", "wm 14", "a@4 4", "wm max"},
			lateN:    1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, late := &optest.Tape{}, &optest.Tape{}
			w, in, c := testWindowJoin(&tc.plan, out, late)
			ctx := context.Background()
			for _, st := range tc.steps {
				if err := st.Apply(ctx, w, in); err != nil {
					t.Fatalf("%s: %v", st, err)
				}
			}
			if err := w.Finish(ctx); err != nil {
				t.Fatal(err)
			}
			optest.CheckLines(t, "output", out.Lines, tc.want)
			if tc.wantLate == nil {
				tc.wantLate = []string{}
				for _, st := range tc.steps {
					if s := string(st); len(s) > 3 && s[:3] == "wm " {
						tc.wantLate = append(tc.wantLate, s)
					}
				}
			}
			optest.CheckLines(t, "late", late.Lines, tc.wantLate)
			if got := c.late.Load(); got != tc.lateN {
				t.Errorf("late count = %d, want %d", got, tc.lateN)
			}
		})
	}
}
