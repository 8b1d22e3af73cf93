package window

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
)

// triggerModules are udfs/trigger and its Rust twin: their triggers must
// behave alike.
var triggerModules = []string{"trigger", "trigger-rust"}

// customWindow is a window operator of plan wp whose custom trigger is
// function fn of module, on a clock the steps move.
func customWindow(t *testing.T, wp plan.Window, module, fn string, out, late *optest.Tape) (*Operator, *counters, *optest.Clock) {
	t.Helper()
	wp.Trigger = &plan.Trigger{Type: plan.TriggerCustom, Purge: wp.Trigger != nil && wp.Trigger.Purge}
	w, c := testWindow(&wp, nil, out, late)
	gc := optest.GroupCall(t, optest.Module(t, module), fn)
	w.trig.udf = &udfTrigger{call: &gc, maxGroups: 4}
	clock := &optest.Clock{}
	w.clock = clock.Read
	return w, c, clock
}

const urgent = `{"urgent":true}`

// TestCustomTriggers drives the window operator with the triggers of
// udfs/trigger, in each SDK's module, and checks their exact firings.
func TestCustomTriggers(t *testing.T) {
	purging := &plan.Trigger{Purge: true}
	tests := []struct {
		name    string
		plan    plan.Window
		fn      string
		steps   []optest.Step
		want    []string
		late    []string
		dropped int64
		keys    int
	}{
		{
			name:  "early: an urgent record fires at once, the end fires again with everything (accumulating)",
			plan:  plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Builtin: builtinCount},
			fn:    "early",
			steps: []optest.Step{"k@1 x; k@2 " + urgent + "; k@3 x; j@4 x", "k@5 x", "wm 9", "k@12 " + urgent, "wm max"},
			want:  []string{count("k", 0, 10, 2), count("j", 0, 10, 1), count("k", 0, 10, 4), "wm 9", count("k", 10, 20, 1), count("k", 10, 20, 1), "wm max"},
		},
		{
			name:  "early, purging: each firing has what came since the last",
			plan:  plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Builtin: builtinCount, Trigger: purging},
			fn:    "early",
			steps: []optest.Step{"k@1 x; k@2 " + urgent + "; k@3 x; k@4 " + urgent, "k@5 x", "wm 9", "wm max"},
			want:  []string{count("k", 0, 10, 2), count("k", 0, 10, 2), count("k", 0, 10, 1), "wm 9", "wm max"},
		},
		{
			name:  "early with lateness: a late record fires again; too late ones go to the side",
			plan:  plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Lateness: 5, Builtin: builtinCount},
			fn:    "early",
			steps: []optest.Step{"k@1 x", "wm 9", "k@2 x", "wm 14", "k@3 x", "wm max"},
			want:  []string{count("k", 0, 10, 1), "wm 9", count("k", 0, 10, 2), "wm 14", "wm max"},
			late:  []string{"wm 9", "wm 14", "k@3 x", "wm max"}, dropped: 1,
		},
		{
			name:  "early over sliding windows: an urgent record fires each of its windows",
			plan:  plan.Window{Type: plan.WindowSliding, Size: 20, Slide: 10, Builtin: builtinCount},
			fn:    "early",
			steps: []optest.Step{"k@1 x", "k@11 " + urgent, "wm 19", "wm max"},
			want:  []string{count("k", 10, 30, 1), count("k", 0, 20, 2), count("k", -10, 10, 1), count("k", 0, 20, 2), "wm 19", count("k", 10, 30, 1), "wm max"},
		},
		{
			name:  "pairs: FIRE_AND_PURGE every second record of a window, across batches",
			plan:  plan.Window{Type: plan.WindowTumbling, Size: 100, Slide: 100, Builtin: builtinCount},
			fn:    "pairs",
			steps: []optest.Step{"k@1 x; k@2 x; k@3 x; j@3 x", "k@4 x; k@5 x", "wm max"},
			want:  []string{count("k", 0, 100, 2), count("k", 0, 100, 2), "wm max"},
		},
		{
			name: "pairs: a processing-time timer fires a lone record (accumulating), the pair then purges",
			plan: plan.Window{Type: plan.WindowTumbling, Size: 100, Slide: 100, Builtin: builtinCount},
			fn:   "pairs",
			// The first record at processing time 0 sets a timer at 10.
			steps: []optest.Step{"at 0", "k@1 x", "tick 5", "tick 10", "at 20", "k@2 x", "wm max"},
			want:  []string{count("k", 0, 100, 1), count("k", 0, 100, 2), "wm max"},
		},
		{
			name: "pairs over sessions: merging adds the counts (onMerge), the merged session fires its pair",
			plan: plan.Window{Type: plan.WindowSession, Gap: 10, Builtin: builtinCount},
			fn:   "pairs",
			// [0,10) and [20,30) hold one record each; k@10 bridges them:
			// 1 + 1 merged, and its own record makes 3, which fire and
			// purge. k@12 is alone again, and pairs never fires at the end.
			steps: []optest.Step{"k@0 x; k@20 x", "k@10 x", "k@12 x", "wm max"},
			want:  []string{count("k", 0, 30, 3), "wm max"},
		},
		{
			name:  "early over sessions: the merged session registers its end (onMerge)",
			plan:  plan.Window{Type: plan.WindowSession, Gap: 10, Builtin: builtinCount},
			fn:    "early",
			steps: []optest.Step{"k@0 x; k@20 x", "k@10 x", "wm 28", "wm 29", "wm max"},
			want:  []string{"wm 28", count("k", 0, 30, 3), "wm 29", "wm max"},
		},
		{
			name:  "early over a global window: urgent records fire, and the end of input (its last millisecond passes)",
			plan:  plan.Window{Type: plan.WindowGlobal, Builtin: builtinCount},
			fn:    "early",
			steps: []optest.Step{"k@1 x; k@5 " + urgent, "wm 100", "k@7 x", "wm max"},
			want:  []string{count("k", 1, 6, 2), "wm 100", count("k", 1, 8, 3), "wm max"},
			keys:  1,
		},
	}
	for _, module := range triggerModules {
		for _, tt := range tests {
			t.Run(module+"/"+tt.name, func(t *testing.T) {
				out, late := &optest.Tape{}, &optest.Tape{}
				w, c, clock := customWindow(t, tt.plan, module, tt.fn, out, late)
				optest.RunClock(t, w, clock, tt.steps)
				optest.CheckLines(t, "results", out.Lines, tt.want)
				if tt.late != nil {
					optest.CheckLines(t, "late output", late.Lines, tt.late)
				}
				if got := c.late.Load(); got != tt.dropped {
					t.Errorf("late records %d, want %d", got, tt.dropped)
				}
				if n := w.store.keys(); n != tt.keys {
					t.Errorf("%d keys left, want %d", n, tt.keys)
				}
			})
		}
	}
}

// TestCustomTriggerClear: at a window's cleanup the trigger's clear runs
// and deletes the timer its state names; without that the processing-time
// timer would outlive the window.
func TestCustomTriggerClear(t *testing.T) {
	for _, module := range triggerModules {
		t.Run(module, func(t *testing.T) {
			out := &optest.Tape{}
			w, _, clock := customWindow(t, plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Lateness: 5, Builtin: builtinCount}, module, "pairs", out, nil)
			optest.RunClock(t, w, clock, []optest.Step{"at 100", "k@1 x"})
			if pt := w.timers.Timers(abi.ProcessingTime); len(pt) != 1 || pt[0].Timestamp != 110 {
				t.Fatalf("processing-time timers %+v, want one at 110", pt)
			}
			optest.RunClock(t, w, clock, []optest.Step{"wm 9"})
			if pt := w.timers.Timers(abi.ProcessingTime); len(pt) != 1 {
				t.Fatalf("the window's end cleared its trigger: timers %+v", pt)
			}
			optest.RunClock(t, w, clock, []optest.Step{"wm 14"})
			if pt, ev := w.timers.Timers(abi.ProcessingTime), w.timers.Timers(abi.EventTime); len(pt)+len(ev) != 0 {
				t.Fatalf("after the cleanup: processing-time timers %+v, event-time %+v, want none", pt, ev)
			}
			if n := w.store.keys(); n != 0 || w.store.used() != 0 {
				t.Fatalf("%d keys and %d bytes left, want none", n, w.store.used())
			}
			optest.CheckLines(t, "results", out.Lines, []string{"wm 9", "wm 14"})
		})
	}
}

// TestCustomTriggerSnapshot: a checkpoint mid-window keeps the trigger's
// state and timers; restored (into one subtask or two, by key group) the
// windows go on exactly as without the restore.
func TestCustomTriggerSnapshot(t *testing.T) {
	wp := plan.Window{Type: plan.WindowTumbling, Size: 100, Slide: 100, Builtin: builtinCount}
	before := []optest.Step{"at 0", "a@1 x; b@2 x; c@3 x; a@4 x; a@5 x", "b@6 x", "at 3"}
	after := []optest.Step{"tick 5", "a@7 x; c@8 x", "tick 11", "wm max"}
	for _, module := range triggerModules {
		t.Run(module, func(t *testing.T) {
			whole := &optest.Tape{}
			w, _, clock := customWindow(t, wp, module, "pairs", whole, nil)
			optest.RunClock(t, w, clock, append(append([]optest.Step{}, before...), after...))
			want := []string{count("a", 0, 100, 2), count("b", 0, 100, 2), count("a", 0, 100, 2), count("c", 0, 100, 2), "wm max"}
			optest.CheckLines(t, "without a restore", whole.Lines, want)

			first := &optest.Tape{}
			w1, _, clock1 := customWindow(t, wp, module, "pairs", first, nil)
			optest.RunClock(t, w1, clock1, before)
			snap := snapshotBytes(t, w1)
			for _, p := range []int{1, 2} {
				got := slices.Clone(first.Lines)
				for i := range p {
					then := &optest.Tape{}
					w2, _, clock2 := customWindow(t, wp, module, "pairs", then, nil)
					err := w2.Restore(context.Background(), []io.Reader{bytes.NewReader(snap)}, 128, state.RangeOf(128, p, i))
					if err != nil {
						t.Fatal(err)
					}
					clock2.Now = clock1.Now
					optest.RunClock(t, w2, clock2, after)
					got = append(got, then.Lines...)
				}
				if p == 1 {
					optest.CheckLines(t, "restored into 1 subtask", got, want)
				}
				got = slices.DeleteFunc(got, func(l string) bool { return l == "wm max" })
				slices.Sort(got)
				wantSorted := slices.Sorted(slices.Values(want[:4]))
				optest.CheckLines(t, "restored into 2 subtasks", got, wantSorted)
			}
		})
	}
}

// TestCustomTriggerFails: a trigger's error fails the record through the
// error policy; a bad answer fails the operator, naming the function.
func TestCustomTriggerFails(t *testing.T) {
	w, _, clock := customWindow(t, plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Builtin: builtinCount}, "trigger", "pairs", &optest.Tape{}, nil)
	optest.RunClock(t, w, clock, []optest.Step{"k@1 x"})
	ks := w.store.key([]byte("k"), false)
	w.store.setTriggerState(ks.slots[0], []byte("bad"))
	err := optest.Step("k@2 x").Apply(context.Background(), w)
	if err == nil || !strings.Contains(err.Error(), "pairs state of 3 bytes, want 16") || !strings.Contains(err.Error(), "function[pairs]") {
		t.Fatalf("error %v, want the trigger's own", err)
	}
}
