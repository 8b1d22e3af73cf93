package window

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
)

// global is a global window with a built-in aggregate and trigger.
func global(agg string, tr plan.Trigger) plan.Window {
	return plan.Window{Type: plan.WindowGlobal, Builtin: agg, Field: "n", Trigger: &tr}
}

// TestGlobalWindows: a global window fires only as its trigger says, and
// reports the least and greatest + 1 of its records' timestamps.
func TestGlobalWindows(t *testing.T) {
	runTriggerCases(t, []triggerCase{
		{
			// Flink's WindowOperatorTest.testContinuousWatermarkTrigger:
			// key1's first record (0) starts its fire times at 3000,
			// key2's (3000) at 6000.
			name: "continuous event time",
			plan: global(builtinCount, plan.Trigger{Type: plan.TriggerContinuousEventTime, Interval: 3000}),
			steps: []optest.Step{
				"key1@0 x", "key2@3000 x; key2@3999 x", "key1@20 x; key1@999 x", "key2@1998 x; key2@1999 x; key2@1000 x",
				"wm 1000", "wm 2000", "wm 3000", "wm 4000", "wm 5000", "wm 6000", "wm 7000", "wm 8000", "wm max",
			},
			want: []string{"wm 1000", "wm 2000", count("key1", 0, 1000, 3), "wm 3000", "wm 4000", "wm 5000",
				count("key1", 0, 1000, 3), count("key2", 1000, 4000, 5), "wm 6000", "wm 7000", "wm 8000",
				// The final watermark passes every fire time and the
				// window's end (math.MaxInt64) at once: one firing.
				count("key1", 0, 1000, 3), count("key2", 1000, 4000, 5), "wm max"},
			keys: 2,
		},
		{
			// Flink's testCountTrigger, without its restore (below).
			name: "count, purging: count windows",
			plan: global(builtinCount, plan.Trigger{Type: plan.TriggerCount, Count: 4, Purge: true}),
			steps: []optest.Step{
				"key2@3000 x; key2@3999 x; key1@20 x; key1@0 x; key1@999 x; key2@1998 x; key2@1999 x",
				"key2@1000 x", "key1@10999 x; key2@1000 x; key2@1000 x; key2@1000 x", "wm max",
			},
			// Every window has fired and been purged: no key is left.
			want: []string{count("key2", 1998, 4000, 4), count("key1", 0, 11000, 4), count("key2", 1000, 1001, 4), "wm max"},
		},
		{
			name: "count, accumulating: the window keeps every record",
			plan: global(builtinSum, plan.Trigger{Type: plan.TriggerCount, Count: 2}),
			steps: []optest.Step{
				`k@5 {"n":1}; k@3 {"n":2}; k@9 {"n":3}`, `k@1 {"n":4}`, "wm max",
			},
			want: []string{`k@5 {"key":"k","window_start":3,"window_end":6,"value":3}`,
				`k@9 {"key":"k","window_start":1,"window_end":10,"value":10}`, "wm max"},
			keys: 1,
		},
		{
			name:  "continuous event time, purging: a fire time without records emits nothing",
			plan:  global(builtinCount, plan.Trigger{Type: plan.TriggerContinuousEventTime, Interval: 10, Purge: true}),
			steps: []optest.Step{"k@1 x; k@2 x", "wm 10", "wm 20", "k@25 x", "wm 30", "wm max"},
			want:  []string{count("k", 1, 3, 2), "wm 10", "wm 20", count("k", 25, 26, 1), "wm 30", "wm max"},
			keys:  1,
		},
		{
			name: "continuous processing time",
			plan: plan.Window{Type: plan.WindowGlobal, Builtin: builtinCount, Processing: true,
				Trigger: &plan.Trigger{Type: plan.TriggerContinuousProcessingTime, Interval: 100}},
			steps: []optest.Step{"at 50", "a@7 x", "tick 99", "tick 100", "at 130", "a@3 x; b@9 x", "tick 250", "wm max"},
			want: []string{count("a", 7, 8, 1), count("a", 3, 8, 2), count("b", 9, 10, 1),
				count("a", 3, 8, 2), count("b", 9, 10, 1), "wm max"},
			keys: 2,
		},
		{
			name:  "no late records",
			plan:  global(builtinCount, plan.Trigger{Type: plan.TriggerCount, Count: 2, Purge: true}),
			steps: []optest.Step{"k@100 x", "wm 1000", "k@1 x", "wm max"},
			want:  []string{"wm 1000", count("k", 1, 101, 2), "wm max"},
		},
	}, nil)
}

// TestGlobalCountTriggerRestore is Flink's testCountTrigger: a snapshot in
// the middle of the count windows (key1 has 3 records, key2 has fired and
// starts again), restored, goes on counting.
func TestGlobalCountTriggerRestore(t *testing.T) {
	wp := global(builtinCount, plan.Trigger{Type: plan.TriggerCount, Count: 4, Purge: true})
	first := newSubtasks(t, wp, 1, nil)
	feed(t, first, []optest.Step{"key2@3000 x; key2@3999 x", "key1@20 x; key1@0 x; key1@999 x", "key2@1998 x; key2@1999 x"})
	optest.CheckLines(t, "before the snapshot", results(first), []string{count("key2", 1998, 4000, 4)})
	then := newSubtasks(t, wp, 1, [][]byte{snapshotBytes(t, first[0].w)})
	feed(t, then, []optest.Step{"key2@1000 x", "key1@10999 x", "key2@1000 x; key2@1000 x; key2@1000 x"})
	optest.CheckLines(t, "after the restore", results(then), []string{count("key1", 0, 11000, 4), count("key2", 1000, 1001, 4)})
}

// TestCountWindowsAreGlobal: a count window {count: N} is a global window
// with a purging count trigger of N, as Flink's countWindow(N).
func TestCountWindowsAreGlobal(t *testing.T) {
	aggs := []string{builtinCount, builtinSum, builtinMin, builtinMax, builtinAvg}
	for trial := range 100 {
		rng := rand.New(rand.NewPCG(uint64(trial), 11))
		n := int64(1 + rng.IntN(6))
		agg := aggs[rng.IntN(len(aggs))]
		var steps []optest.Step
		for range 5 + rng.IntN(20) {
			var batch []string
			for range 1 + rng.IntN(10) {
				batch = append(batch, string(rune('a'+rng.IntN(3)))+"@"+strconv.Itoa(rng.IntN(100))+` {"n":`+strconv.Itoa(rng.IntN(50)-25)+`}`)
			}
			steps = append(steps, optest.Step(joinSteps(batch)))
			if rng.IntN(3) == 0 {
				steps = append(steps, optest.Step("wm "+strconv.Itoa(rng.IntN(100))))
			}
		}
		steps = append(steps, "wm max")
		run := func(wp plan.Window) []string {
			out := &optest.Tape{}
			w, _ := testWindow(&wp, nil, out, nil)
			optest.Run(t, w, steps)
			return out.Lines
		}
		counted := run(plan.Window{Type: plan.WindowCount, Count: n, CountSlide: n, Builtin: agg, Field: "n"})
		globalled := run(global(agg, plan.Trigger{Type: plan.TriggerCount, Count: n, Purge: true}))
		if !slices.Equal(counted, globalled) {
			t.Fatalf("trial %d (count %d, %s):\ncount window:\n%v\nglobal window:\n%v", trial, n, agg, counted, globalled)
		}
	}
}

func joinSteps(parts []string) string {
	s := ""
	for i, p := range parts {
		if i > 0 {
			s += "; "
		}
		s += p
	}
	return s
}
