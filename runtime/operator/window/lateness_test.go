package window

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
)

// lateCase is a window operator run with its exact results, late output and
// count of late records.
type lateCase struct {
	name    string
	plan    plan.Window
	steps   []optest.Step
	want    []string
	late    []string
	dropped int64
}

func runLateCases(t *testing.T, tests []lateCase, fn func(t *testing.T) func(w *Operator, out *operator.Out, policy *operator.ErrorPolicy) windowFunc, setup func(t *testing.T, w *Operator)) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, late := &optest.Tape{}, &optest.Tape{}
			var f func(w *Operator, out *operator.Out, policy *operator.ErrorPolicy) windowFunc
			if fn != nil {
				f = fn(t)
			}
			w, c := testWindow(&tt.plan, f, out, late)
			if setup != nil {
				setup(t, w)
			}
			optest.Run(t, w, tt.steps)
			optest.CheckLines(t, "results", out.Lines, tt.want)
			optest.CheckLines(t, "late output", late.Lines, tt.late)
			if got := c.late.Load(); got != tt.dropped {
				t.Fatalf("late records %d, want %d", got, tt.dropped)
			}
			if n := w.store.keys(); n != 0 && tt.plan.Type != plan.WindowCount {
				t.Fatalf("%d keys left after the end of input", n)
			}
		})
	}
}

// count is a built-in count result line of key k.
func count(k string, start, end, n int64) string {
	return fmt.Sprintf(`%s@%d {"key":%q,"window_start":%d,"window_end":%d,"value":%d}`, k, end-1, k, start, end, n)
}

// TestSessionMergeBeforeLateness covers records whose own window [t, t+gap)
// is past the watermark (and the allowed lateness) but which reach a session
// that is not: they merge into it, as in Flink, where lateness is decided on
// the merged window. Sessions extended backwards, forwards, bridged, and
// records at, one before and one past the lateness bound, with and without
// allowed lateness.
func TestSessionMergeBeforeLateness(t *testing.T) {
	session := func(lateness int64) plan.Window {
		return plan.Window{Type: plan.WindowSession, Gap: 10, Lateness: lateness, Builtin: builtinCount}
	}
	tests := []lateCase{
		{
			name:  "extends an open session backwards, no lateness",
			plan:  session(0),
			steps: []optest.Step{"k@20 a", "wm 25", "k@12 b", "wm max"},
			// [12, 22) alone would be late at 25; merged, [12, 30) is not.
			want: []string{"wm 25", count("k", 12, 30, 2), "wm max"},
			late: []string{"wm 25", "wm max"},
		},
		{
			name:  "falls inside an open session, no lateness",
			plan:  session(0),
			steps: []optest.Step{"k@10 a; k@18 b; k@25 c", "wm 30", "k@11 d; k@15 e", "wm max"},
			want:  []string{"wm 30", count("k", 10, 35, 5), "wm max"},
			late:  []string{"wm 30", "wm max"},
		},
		{
			name:  "reaches a session already dropped, no lateness",
			plan:  session(0),
			steps: []optest.Step{"k@20 a", "wm 29", "k@12 b; k@25 c", "wm max"},
			// k@25's own window [25, 35) is open: it opens a new session.
			want:    []string{count("k", 20, 30, 1), "wm 29", count("k", 25, 35, 1), "wm max"},
			late:    []string{"wm 29", "k@12 b", "wm max"},
			dropped: 1,
		},
		{
			name:  "extends forwards an open session",
			plan:  session(0),
			steps: []optest.Step{"k@0 a", "wm 5", "k@8 b", "wm 9", "wm max"},
			want:  []string{"wm 5", "wm 9", count("k", 0, 18, 2), "wm max"},
			late:  []string{"wm 5", "wm 9", "wm max"},
		},
		{
			name:  "extends forwards a fired session within the lateness: no early result",
			plan:  session(5),
			steps: []optest.Step{"k@0 a", "wm 12", "k@8 b", "wm 16", "wm 17", "wm max"},
			want: []string{count("k", 0, 10, 1), "wm 12", "wm 16",
				count("k", 0, 18, 2), "wm 17", "wm max"},
			late: []string{"wm 12", "wm 16", "wm 17", "wm max"},
		},
		{
			name: "bridges two open sessions",
			plan: session(0),
			// k@20 extends [30, 40) backwards; k@10 touches [0, 10) and
			// [20, 40).
			steps: []optest.Step{"k@0 a; k@30 b", "wm 8", "k@20 c", "k@10 d", "wm max"},
			want:  []string{"wm 8", count("k", 0, 40, 4), "wm max"},
			late:  []string{"wm 8", "wm max"},
		},
		{
			name:  "bridges a fired session within the lateness and an open one",
			plan:  session(20),
			steps: []optest.Step{"k@0 a; k@20 b", "wm 12", "k@10 c", "wm max"},
			want: []string{count("k", 0, 10, 1), "wm 12",
				count("k", 0, 30, 3), "wm max"},
			late: []string{"wm 12", "wm max"},
		},
		{
			name: "own window past the lateness, session within it: fires again",
			plan: session(5),
			// [0, 20) fired at 19 and is kept until 24; [3, 13) alone is
			// past 12 + 5 = 17.
			steps: []optest.Step{"k@0 a; k@10 b", "wm 22", "k@3 c", "wm max"},
			want:  []string{count("k", 0, 20, 2), "wm 22", count("k", 0, 20, 3), "wm max"},
			late:  []string{"wm 22", "wm max"},
		},
		{
			name:  "one before the lateness bound of the session",
			plan:  session(5),
			steps: []optest.Step{"k@0 a; k@10 b", "wm 23", "k@3 c", "wm max"},
			want:  []string{count("k", 0, 20, 2), "wm 23", count("k", 0, 20, 3), "wm max"},
			late:  []string{"wm 23", "wm max"},
		},
		{
			name: "at the lateness bound of the session: late",
			plan: session(5),
			// The session is dropped at 19 + 5 = 24; k@14 opens [14, 24),
			// not late (23 + 5 > 24), which is due at once.
			steps:   []optest.Step{"k@0 a; k@10 b", "wm 24", "k@3 c; k@14 d", "wm max"},
			want:    []string{count("k", 0, 20, 2), "wm 24", count("k", 14, 24, 1), "wm max"},
			late:    []string{"wm 24", "k@3 c", "wm max"},
			dropped: 1,
		},
		{
			name:    "past the lateness bound of the session: late",
			plan:    session(5),
			steps:   []optest.Step{"k@0 a; k@10 b", "wm 30", "k@3 c", "wm max"},
			want:    []string{count("k", 0, 20, 2), "wm 30", "wm max"},
			late:    []string{"wm 30", "k@3 c", "wm max"},
			dropped: 1,
		},
		{
			name:  "no lateness: one before the session's end",
			plan:  session(0),
			steps: []optest.Step{"k@0 a; k@10 b", "wm 18", "k@3 c", "wm max"},
			want:  []string{"wm 18", count("k", 0, 20, 3), "wm max"},
			late:  []string{"wm 18", "wm max"},
		},
		{
			name:    "no lateness: at the session's end",
			plan:    session(0),
			steps:   []optest.Step{"k@0 a; k@10 b", "wm 19", "k@3 c", "wm max"},
			want:    []string{count("k", 0, 20, 2), "wm 19", "wm max"},
			late:    []string{"wm 19", "k@3 c", "wm max"},
			dropped: 1,
		},
		{
			name:  "late records of one key do not join another key's session",
			plan:  session(0),
			steps: []optest.Step{"k@20 a", "wm 25", "j@12 b; k@12 c", "wm max"},
			want:  []string{"wm 25", count("k", 12, 30, 2), "wm max"},
			late:  []string{"wm 25", "j@12 b", "wm max"},
			// j has no session: its record is late and leaves no key behind.
			dropped: 1,
		},
		{
			name:  "a batch that merges several late records in turn",
			plan:  session(0),
			steps: []optest.Step{"k@40 a", "wm 45", "k@31 b; k@22 c; k@13 d; k@2 e", "wm max"},
			// Each record reaches the session the one before extended.
			want: []string{"wm 45", count("k", 13, 50, 4), "wm max"},
			late: []string{"wm 45", "k@2 e", "wm max"},
			// k@2: [2, 12) does not touch [13, 50).
			dropped: 1,
		},
	}
	runLateCases(t, tests, nil, nil)
}

// TestSessionMergeBeforeLatenessWasm runs records that reach into open
// sessions through a Wasm aggregate, a Wasm process_window function and a
// Wasm session gap function.
func TestSessionMergeBeforeLatenessWasm(t *testing.T) {
	avg := func(t *testing.T) func(w *Operator, out *operator.Out, policy *operator.ErrorPolicy) windowFunc {
		return udfWindowFunc(t, optest.Module(t, "avg"), "avg")
	}
	summary := func(t *testing.T) func(w *Operator, out *operator.Out, policy *operator.ErrorPolicy) windowFunc {
		return udfWindowFunc(t, optest.Module(t, "sessions"), "summary")
	}
	avgLine := func(start, end int64, mean string, n int) string {
		return fmt.Sprintf(`a@%d {"key":"a","window_start":%d,"window_end":%d,"avg":%s,"count":%d}`, end-1, start, end, mean, n)
	}
	t.Run("aggregate", func(t *testing.T) {
		runLateCases(t, []lateCase{
			{
				name:  "extends backwards, no lateness",
				plan:  plan.Window{Type: plan.WindowSession, Gap: 10},
				steps: []optest.Step{clicks(click("a", 20, 2, "/")), "wm 25", clicks(click("a", 12, 4, "/")), "wm max"},
				want:  []string{"wm 25", avgLine(12, 30, "3", 2), "wm max"},
				late:  []string{"wm 25", "wm max"},
			},
			{
				name: "bridges two open sessions with a late record between",
				plan: plan.Window{Type: plan.WindowSession, Gap: 10},
				steps: []optest.Step{clicks(click("a", 0, 1, "/"), click("a", 30, 3, "/")), "wm 8",
					clicks(click("a", 20, 5, "/")), clicks(click("a", 10, 7, "/")), "wm max"},
				want: []string{"wm 8", avgLine(0, 40, "4", 4), "wm max"},
				late: []string{"wm 8", "wm max"},
			},
			{
				name: "within the session's lateness fires again; past it is late",
				plan: plan.Window{Type: plan.WindowSession, Gap: 10, Lateness: 5},
				steps: []optest.Step{clicks(click("a", 0, 2, "/"), click("a", 10, 4, "/")), "wm 22",
					clicks(click("a", 3, 6, "/")), "wm 24", clicks(click("a", 4, 8, "/")), "wm max"},
				want:    []string{avgLine(0, 20, "3", 2), "wm 22", avgLine(0, 20, "4", 3), "wm 24", "wm max"},
				late:    []string{"wm 22", "wm 24", `a@4 {"user":"a","page":"/","amount":8}`, "wm max"},
				dropped: 1,
			},
		}, avg, nil)
	})
	t.Run("process_window", func(t *testing.T) {
		runLateCases(t, []lateCase{
			{
				name: "extends backwards, no lateness",
				plan: plan.Window{Type: plan.WindowSession, Gap: 10},
				steps: []optest.Step{clicks(click("a", 20, 2, "/b")), "wm 25",
					clicks(click("a", 12, 4, "/a"), click("a", 3, 1, "/c")), "wm max"},
				want: []string{"wm 25",
					`a@29 {"key":"a","window_start":3,"window_end":30,"events":3,"amount":7,"pages":["/c","/a","/b"]}`, "wm max"},
				late: []string{"wm 25", "wm max"},
			},
			{
				name: "at the lateness bound: late",
				plan: plan.Window{Type: plan.WindowSession, Gap: 10, Lateness: 5},
				steps: []optest.Step{clicks(click("a", 0, 2, "/a"), click("a", 10, 4, "/b")), "wm 23",
					clicks(click("a", 3, 1, "/c")), "wm 24", clicks(click("a", 5, 1, "/d")), "wm max"},
				want: []string{
					`a@19 {"key":"a","window_start":0,"window_end":20,"events":2,"amount":6,"pages":["/a","/b"]}`, "wm 23",
					`a@19 {"key":"a","window_start":0,"window_end":20,"events":3,"amount":7,"pages":["/a","/c","/b"]}`, "wm 24", "wm max"},
				late:    []string{"wm 23", "wm 24", `a@5 {"user":"a","page":"/d","amount":1}`, "wm max"},
				dropped: 1,
			},
		}, summary, nil)
	})
	t.Run("session gap function", func(t *testing.T) {
		// The gap function gives 30 s, 5 minutes under /checkout.
		gapFn := func(t *testing.T, w *Operator) {
			g := optest.GroupCall(t, optest.Module(t, "sessions"), "gap")
			w.gapCall = &g
		}
		runLateCases(t, []lateCase{
			{
				name: "a short gap reaching into a long session",
				plan: plan.Window{Type: plan.WindowSession, Builtin: builtinCount},
				// [100000, 400000) is open at 200000; [80000, 110000) alone
				// is past it.
				steps: []optest.Step{clicks(click("a", 100000, 1, "/checkout/pay")), "wm 200000",
					clicks(click("a", 80000, 1, "/x"), click("a", 10000, 1, "/y")), "wm max"},
				want:    []string{"wm 200000", count("a", 80000, 400000, 2), "wm max"},
				late:    []string{"wm 200000", `a@10000 {"user":"a","page":"/y","amount":1}`, "wm max"},
				dropped: 1,
			},
		}, nil, gapFn)
	})
}

// TestWindowsAtInt64Limits runs windows whose ends, cleanup times and
// timers lie at the ends of the int64 range: they are capped instead of
// wrapping around, so every window fires once with its records and is
// dropped at the end of input.
func TestWindowsAtInt64Limits(t *testing.T) {
	const maxTs, minTs = math.MaxInt64, math.MinInt64
	// top(d) is math.MaxInt64 - d, bottom(d) math.MinInt64 + d.
	top := func(d int64) int64 { return maxTs - d }
	bottom := func(d int64) int64 { return minTs + d }
	rec := func(k string, ts int64, v string) string { return k + "@" + strconv.FormatInt(ts, 10) + " " + v }
	wmAt := func(ts int64) optest.Step { return optest.Step("wm " + strconv.FormatInt(ts, 10)) }
	tests := []lateCase{
		{
			name: "tumbling at the top with lateness past the range",
			plan: plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Lateness: 3600000, Builtin: builtinCount},
			// math.MaxInt64 ends in 7: the last window starts at top(7); a
			// record at math.MaxInt64 is windowed as top(1).
			steps: []optest.Step{optest.Step(rec("k", top(3), "a")), wmAt(top(2)), optest.Step(rec("k", top(20), "b")),
				optest.Step(rec("k", top(0), "c")), "wm max"},
			want: []string{"wm " + strconv.FormatInt(top(2), 10), count("k", top(27), top(17), 1),
				count("k", top(7), maxTs, 2), "wm max"},
			late: []string{"wm " + strconv.FormatInt(top(2), 10), "wm max"},
		},
		{
			name:  "sliding at the top: windows sharing the capped end",
			plan:  plan.Window{Type: plan.WindowSliding, Size: 20, Slide: 10, Builtin: builtinCount},
			steps: []optest.Step{optest.Step(rec("k", top(15), "a") + "; " + rec("k", top(1), "b")), "wm max"},
			want: []string{count("k", top(27), top(7), 1), count("k", top(17), maxTs, 2),
				count("k", top(7), maxTs, 1), "wm max"},
			late: []string{"wm max"},
		},
		{
			name: "sliding at the top, late within the lateness",
			plan: plan.Window{Type: plan.WindowSliding, Size: 20, Slide: 10, Lateness: 100, Builtin: builtinCount},
			steps: []optest.Step{optest.Step(rec("k", top(15), "a")), wmAt(top(1)), optest.Step(rec("k", top(16), "b")),
				wmAt(top(0)), optest.Step(rec("k", top(0), "c"))},
			// A late record fires its windows again, the latest first.
			want: []string{count("k", top(27), top(7), 1), count("k", top(17), maxTs, 1), "wm " + strconv.FormatInt(top(1), 10),
				count("k", top(17), maxTs, 2), count("k", top(27), top(7), 2), "wm max"},
			// The end of input: nothing is late at math.MaxInt64 itself but
			// every window is gone.
			late:    []string{"wm " + strconv.FormatInt(top(1), 10), "wm max", "k@" + strconv.FormatInt(maxTs, 10) + " c"},
			dropped: 1,
		},
		{
			name: "session at the top with lateness past the range",
			plan: plan.Window{Type: plan.WindowSession, Gap: 10, Lateness: 1000, Builtin: builtinCount},
			steps: []optest.Step{optest.Step(rec("k", top(30), "a")), wmAt(top(25)), optest.Step(rec("k", top(5), "b")),
				wmAt(top(21)), optest.Step(rec("k", top(30), "c")), "wm max"},
			want: []string{"wm " + strconv.FormatInt(top(25), 10), count("k", top(30), top(20), 1),
				"wm " + strconv.FormatInt(top(21), 10), count("k", top(30), top(20), 2),
				count("k", top(5), maxTs, 1), "wm max"},
			late: []string{"wm " + strconv.FormatInt(top(25), 10), "wm " + strconv.FormatInt(top(21), 10), "wm max"},
		},
		{
			name:  "count window at the top",
			plan:  plan.Window{Type: plan.WindowCount, Count: 2, CountSlide: 2, Builtin: builtinCount},
			steps: []optest.Step{optest.Step(rec("k", maxTs, "a") + "; " + rec("k", top(1), "b")), "wm max"},
			want:  []string{count("k", top(1), maxTs, 2), "wm max"},
			late:  []string{"wm max"},
		},
		{
			name: "tumbling at the bottom",
			plan: plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Builtin: builtinCount},
			// math.MinInt64 is 2 past a multiple of 10: its window starts
			// before the range, at math.MinInt64 once capped.
			steps: []optest.Step{optest.Step(rec("k", minTs, "a") + "; " + rec("k", bottom(7), "b") + "; " + rec("k", bottom(8), "c")), "wm max"},
			want:  []string{count("k", minTs, bottom(8), 2), count("k", bottom(8), bottom(18), 1), "wm max"},
			late:  []string{"wm max"},
		},
		{
			name: "sliding at the bottom: windows sharing the capped start",
			plan: plan.Window{Type: plan.WindowSliding, Size: 20, Slide: 10, Lateness: 5, Builtin: builtinCount},
			steps: []optest.Step{optest.Step(rec("k", minTs, "a") + "; " + rec("k", bottom(9), "b")), wmAt(bottom(10)),
				optest.Step(rec("k", bottom(1), "c")), "wm max"},
			// At bottom(10), [min, bottom(8)) has fired and is kept until
			// bottom(7) + 5: c, in it and in [min, bottom(18)), fires it
			// again at once.
			want: []string{count("k", minTs, bottom(8), 1), "wm " + strconv.FormatInt(bottom(10), 10),
				count("k", minTs, bottom(8), 2), count("k", minTs, bottom(18), 3), count("k", bottom(8), bottom(28), 1), "wm max"},
			late: []string{"wm " + strconv.FormatInt(bottom(10), 10), "wm max"},
		},
	}
	runLateCases(t, tests, nil, nil)
}
