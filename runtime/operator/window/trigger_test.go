package window

import (
	"testing"

	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
)

// triggerCase is a window operator run with a trigger: its steps (records,
// watermarks, "at N" and "tick N" of the processing-time clock), exact
// results, late output and count of records too late.
type triggerCase struct {
	name    string
	plan    plan.Window
	steps   []optest.Step
	want    []string
	late    []string
	dropped int64
	// keys is the number of keys left after the steps.
	keys int
}

func runTriggerCases(t *testing.T, tests []triggerCase, fn func(t *testing.T) func(w *Operator, out *operator.Out, policy *operator.ErrorPolicy) windowFunc) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, late := &optest.Tape{}, &optest.Tape{}
			var f func(w *Operator, out *operator.Out, policy *operator.ErrorPolicy) windowFunc
			if fn != nil {
				f = fn(t)
			}
			w, c := testWindow(&tt.plan, f, out, late)
			clock := &optest.Clock{}
			w.clock = clock.Read
			optest.RunClock(t, w, clock, tt.steps)
			optest.CheckLines(t, "results", out.Lines, tt.want)
			if tt.late != nil {
				optest.CheckLines(t, "late output", late.Lines, tt.late)
			}
			if got := c.late.Load(); got != tt.dropped {
				t.Fatalf("late records %d, want %d", got, tt.dropped)
			}
			if n := w.store.keys(); n != tt.keys {
				t.Fatalf("%d keys left, want %d", n, tt.keys)
			}
		})
	}
}

// tumbling is a tumbling window of size with a built-in count and trigger.
func tumbling(size, lateness int64, tr plan.Trigger) plan.Window {
	return plan.Window{Type: plan.WindowTumbling, Size: size, Slide: size, Lateness: lateness, Builtin: builtinCount, Trigger: &tr}
}

// TestTriggers drives the window operator with each built-in trigger and
// checks its exact firings, as Flink's WindowOperatorTest and trigger tests
// do.
func TestTriggers(t *testing.T) {
	runTriggerCases(t, []triggerCase{
		{
			name:  "event time, explicit: fires at the end, again for each record late within the lateness",
			plan:  tumbling(10, 5, plan.Trigger{Type: plan.TriggerEventTime}),
			steps: []optest.Step{"k@1 a; k@2 b", "wm 9", "k@3 c", "k@4 d", "wm 14", "k@5 e", "wm max"},
			want:  []string{count("k", 0, 10, 2), "wm 9", count("k", 0, 10, 3), count("k", 0, 10, 4), "wm 14", "wm max"},
			late:  []string{"wm 9", "wm 14", "k@5 e", "wm max"}, dropped: 1,
		},
		{
			name:  "event time, purging: a late firing emits only what came after the last one",
			plan:  tumbling(10, 5, plan.Trigger{Type: plan.TriggerEventTime, Purge: true}),
			steps: []optest.Step{"k@1 a; k@2 b", "wm 9", "k@3 c", "k@4 d; k@6 f", "wm 14", "wm max"},
			want:  []string{count("k", 0, 10, 2), "wm 9", count("k", 0, 10, 1), count("k", 0, 10, 1), count("k", 0, 10, 1), "wm 14", "wm max"},
		},
		{
			name:  "count: fires every count records of a window, never at its end; the window accumulates",
			plan:  tumbling(10, 0, plan.Trigger{Type: plan.TriggerCount, Count: 2}),
			steps: []optest.Step{"k@1 a; k@2 b; j@1 x; k@3 c", "k@4 d; k@5 e; k@11 f", "wm 9", "k@12 g", "wm max"},
			want:  []string{count("k", 0, 10, 2), count("k", 0, 10, 4), "wm 9", count("k", 10, 20, 2), "wm max"},
		},
		{
			name:  "count, purging: each firing has count records",
			plan:  tumbling(10, 0, plan.Trigger{Type: plan.TriggerCount, Count: 2, Purge: true}),
			steps: []optest.Step{"k@1 a; k@2 b; k@3 c", "k@4 d; k@5 e", "wm 9", "wm max"},
			want:  []string{count("k", 0, 10, 2), count("k", 0, 10, 2), "wm 9", "wm max"},
		},
		{
			name:  "count over sliding windows: each window counts its own records",
			plan:  plan.Window{Type: plan.WindowSliding, Size: 20, Slide: 10, Builtin: builtinCount, Trigger: &plan.Trigger{Type: plan.TriggerCount, Count: 2}},
			steps: []optest.Step{"k@1 a", "k@11 b", "k@12 c", "wm max"},
			// k@1 is in [-10,10) and [0,20), k@11 in [10,30) and [0,20).
			want: []string{count("k", 0, 20, 2), count("k", 10, 30, 2), "wm max"},
		},
		{
			name:  "count over sessions: merging adds the counts",
			plan:  plan.Window{Type: plan.WindowSession, Gap: 10, Builtin: builtinCount, Trigger: &plan.Trigger{Type: plan.TriggerCount, Count: 3}},
			steps: []optest.Step{"k@0 a; k@20 b", "k@10 c", "k@12 d", "wm max"},
			// [0,10) and [20,30) have 1 each; k@10 bridges them: 1 + 1,
			// and its own record makes 3.
			want: []string{count("k", 0, 30, 3), "wm max"},
		},
		{
			name:  "count with lateness: late records count; too late ones go to the side",
			plan:  tumbling(10, 5, plan.Trigger{Type: plan.TriggerCount, Count: 2}),
			steps: []optest.Step{"k@1 a", "wm 9", "k@2 b", "wm 14", "k@3 c", "wm max"},
			want:  []string{"wm 9", count("k", 0, 10, 2), "wm 14", "wm max"},
			late:  []string{"wm 9", "wm 14", "k@3 c", "wm max"}, dropped: 1,
		},
		{
			name:  "continuous event time: every interval from the first record, and at the end",
			plan:  tumbling(100, 0, plan.Trigger{Type: plan.TriggerContinuousEventTime, Interval: 10}),
			steps: []optest.Step{"k@5 a; k@7 b", "wm 9", "wm 10", "k@15 c", "wm 25", "wm 31", "wm 99", "wm max"},
			want: []string{"wm 9", count("k", 0, 100, 2), "wm 10", count("k", 0, 100, 3), "wm 25", count("k", 0, 100, 3), "wm 31",
				// One watermark passes 40, 50, ... 90 and the end, which
				// fire once (Flink fires each, with the same contents).
				count("k", 0, 100, 3), "wm 99", "wm max"},
		},
		{
			name:  "continuous event time, purging",
			plan:  tumbling(100, 0, plan.Trigger{Type: plan.TriggerContinuousEventTime, Interval: 10, Purge: true}),
			steps: []optest.Step{"k@5 a; k@7 b", "wm 10", "k@15 c", "wm 20", "wm 30", "k@35 d", "wm max"},
			want:  []string{count("k", 0, 100, 2), "wm 10", count("k", 0, 100, 1), "wm 20", "wm 30", count("k", 0, 100, 1), "wm max"},
		},
		{
			name:  "continuous event time: a late record fires at once",
			plan:  tumbling(10, 10, plan.Trigger{Type: plan.TriggerContinuousEventTime, Interval: 4}),
			steps: []optest.Step{"k@1 a", "wm 4", "wm 9", "k@2 b", "wm max"},
			// At 4, at 8 and the end (9) at once, and for the late record.
			want: []string{count("k", 0, 10, 1), "wm 4", count("k", 0, 10, 1), "wm 9", count("k", 0, 10, 2), "wm max"},
		},
		{
			name:  "continuous event time over sessions: the merged session keeps the earliest fire time",
			plan:  plan.Window{Type: plan.WindowSession, Gap: 10, Builtin: builtinCount, Trigger: &plan.Trigger{Type: plan.TriggerContinuousEventTime, Interval: 100}},
			steps: []optest.Step{"k@0 a; k@250 b", "k@240 c", "wm 99", "wm 100", "wm max"},
			// [0,10) fires at min(100, 9) = 9; [250,260) at 259 (its
			// start rounded down, 200, plus 100, capped); [240,260)
			// merged keeps 259.
			want: []string{count("k", 0, 10, 1), "wm 99", "wm 100", count("k", 240, 260, 2), "wm max"},
		},
		{
			name:  "processing time on event-time windows: fires when the clock passes the end",
			plan:  tumbling(10, 0, plan.Trigger{Type: plan.TriggerProcessingTime}),
			steps: []optest.Step{"at 0", "k@1 a; k@2 b", "tick 8", "tick 9", "k@3 c", "tick 10", "wm 9", "k@4 d", "wm max"},
			// k@3 registers the same timer, already due: the next tick
			// fires the window again; the watermark then drops it.
			want: []string{count("k", 0, 10, 2), count("k", 0, 10, 3), "wm 9", "wm max"},
			late: []string{"wm 9", "k@4 d", "wm max"}, dropped: 1,
		},
		{
			name:  "continuous processing time on event-time windows: every interval of the clock until the watermark drops the window",
			plan:  tumbling(100, 0, plan.Trigger{Type: plan.TriggerContinuousProcessingTime, Interval: 10}),
			steps: []optest.Step{"at 3", "k@5 a", "tick 10", "at 12", "k@6 b", "tick 19", "tick 20", "tick 45", "wm 99", "tick 50", "wm max"},
			want:  []string{count("k", 0, 100, 1), count("k", 0, 100, 2), count("k", 0, 100, 2), "wm 99", "wm max"},
		},
		{
			name: "continuous processing time on processing-time windows",
			plan: plan.Window{Type: plan.WindowTumbling, Size: 100, Slide: 100, Processing: true, Builtin: builtinCount,
				Trigger: &plan.Trigger{Type: plan.TriggerContinuousProcessingTime, Interval: 30}},
			steps: []optest.Step{"at 5", "k@0 a", "tick 30", "at 40", "k@0 b", "tick 60", "tick 90", "tick 98", "tick 99", "at 120", "k@0 c", "tick 150", "wm max"},
			// At 99 the last firing and the cleanup. The end of input
			// passes the pending fire time (180) and the window's end: one
			// firing.
			want: []string{count("k", 0, 100, 1), count("k", 0, 100, 2), count("k", 0, 100, 2), count("k", 0, 100, 2),
				count("k", 100, 200, 1), count("k", 100, 200, 1), "wm max"},
		},
		{
			name: "processing time on processing-time sessions, purging",
			plan: plan.Window{Type: plan.WindowSession, Gap: 10, Processing: true, Builtin: builtinCount,
				Trigger: &plan.Trigger{Type: plan.TriggerProcessingTime, Purge: true}},
			steps: []optest.Step{"at 1", "k@0 a", "at 5", "k@0 b", "tick 14", "tick 15", "at 20", "k@0 c", "wm max"},
			want:  []string{count("k", 1, 15, 2), count("k", 20, 30, 1), "wm max"},
		},
		{
			name:  "window_all with a count trigger",
			plan:  plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, All: true, Builtin: builtinCount, Trigger: &plan.Trigger{Type: plan.TriggerCount, Count: 3, Purge: true}},
			steps: []optest.Step{"a@1 x; b@2 y; c@3 z; d@4 w", "wm max"},
			want:  []string{count("", 0, 10, 3), "wm max"},
		},
	}, nil)
}

// TestTriggersUDF: triggers with UDF window functions, whose adds are
// batched: a firing in the middle of a batch sees exactly the records
// before it.
func TestTriggersUDF(t *testing.T) {
	avg := func(t *testing.T) func(w *Operator, out *operator.Out, policy *operator.ErrorPolicy) windowFunc {
		return udfWindowFunc(t, optest.Module(t, "avg"), "avg")
	}
	runTriggerCases(t, []triggerCase{
		{
			name: "aggregate, count trigger, accumulating",
			plan: plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Trigger: &plan.Trigger{Type: plan.TriggerCount, Count: 2}},
			steps: []optest.Step{
				clicks(click("a", 1, 2, "/"), click("b", 1, 1, "/"), click("a", 2, 4, "/"), click("a", 3, 6, "/"), click("a", 4, 8, "/"), click("b", 2, 3, "/")),
				"wm max",
			},
			want: []string{
				`a@9 {"key":"a","window_start":0,"window_end":10,"avg":3,"count":2}`,
				`a@9 {"key":"a","window_start":0,"window_end":10,"avg":5,"count":4}`,
				`b@9 {"key":"b","window_start":0,"window_end":10,"avg":2,"count":2}`, "wm max",
			},
		},
		{
			name: "aggregate, count trigger, purging",
			plan: plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Trigger: &plan.Trigger{Type: plan.TriggerCount, Count: 2, Purge: true}},
			steps: []optest.Step{
				clicks(click("a", 1, 2, "/"), click("a", 2, 4, "/"), click("a", 3, 6, "/"), click("a", 4, 8, "/"), click("a", 5, 1, "/")),
				"wm max",
			},
			want: []string{
				`a@9 {"key":"a","window_start":0,"window_end":10,"avg":3,"count":2}`,
				`a@9 {"key":"a","window_start":0,"window_end":10,"avg":7,"count":2}`, "wm max",
			},
		},
		{
			name: "aggregate over merging sessions, continuous event time",
			plan: plan.Window{Type: plan.WindowSession, Gap: 10, Trigger: &plan.Trigger{Type: plan.TriggerContinuousEventTime, Interval: 5}},
			steps: []optest.Step{
				clicks(click("a", 0, 2, "/"), click("a", 15, 4, "/")), "wm 5", clicks(click("a", 8, 6, "/")), "wm max",
			},
			// [0,10) fires at 5; k@8 bridges [0,10) and [15,25) into
			// [0,25), which keeps the earliest fire time (9, [0,10)'s
			// next, against 20): the final watermark passes 9, 14, 19 and
			// its end at once, which fire once.
			want: []string{
				`a@9 {"key":"a","window_start":0,"window_end":10,"avg":2,"count":1}`, "wm 5",
				`a@24 {"key":"a","window_start":0,"window_end":25,"avg":4,"count":3}`, "wm max",
			},
		},
	}, avg)
	largest := func(t *testing.T) func(w *Operator, out *operator.Out, policy *operator.ErrorPolicy) windowFunc {
		return udfWindowFunc(t, optest.Module(t, "avg"), "largest")
	}
	runTriggerCases(t, []triggerCase{
		{
			name: "reduce with a purging count trigger over window_all",
			plan: plan.Window{Type: plan.WindowTumbling, Size: 100, Slide: 100, All: true, Trigger: &plan.Trigger{Type: plan.TriggerCount, Count: 2, Purge: true}},
			steps: []optest.Step{
				clicks(click("a", 1, 5, "/x"), click("b", 2, 3, "/y"), click("c", 3, 1, "/z")), clicks(click("d", 4, 9, "/w")), "wm max",
			},
			want: []string{`@99 {"user":"a","page":"/x","amount":5}`, `@99 {"user":"d","page":"/w","amount":9}`, "wm max"},
		},
	}, largest)
}
