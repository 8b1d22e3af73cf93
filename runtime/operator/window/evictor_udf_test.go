package window

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
)

// customEvictor is the custom evictor of udfs/evictor-c's function over
// the window function echo; every call carries at most 2 windows, so that
// firings of several windows span calls.
func customEvictor(function string) func(t *testing.T) func(w *Operator, out *operator.Out, policy *operator.ErrorPolicy) windowFunc {
	return func(t *testing.T) func(w *Operator, out *operator.Out, policy *operator.ErrorPolicy) windowFunc {
		inner, mod := echo(t), optest.Module(t, "evictor-c")
		return func(w *Operator, out *operator.Out, policy *operator.ErrorPolicy) windowFunc {
			w.evict.custom = &operator.GroupRunner{Kind: abi.KindEvictor, MaxGroups: 2, Policy: policy, Out: out, Call: optest.GroupCall(t, mod, function)}
			return inner(w, out, policy)
		}
	}
}

// custom is a custom evictor's plan, run before the window function,
// after it (when "after") or both (when "both").
func custom(when string) *plan.Evictor {
	return &plan.Evictor{Type: plan.EvictorCustom, After: when == "after", Both: when == "both"}
}

// n is a record of key k at ts whose value is {"n":v}.
func n(k string, ts int64, v string) string {
	return k + "@" + strconv.FormatInt(ts, 10) + ` {"n":` + v + `}`
}

func steps(batches ...[]string) []optest.Step {
	var out []optest.Step
	for _, b := range batches {
		out = append(out, optest.Step(strings.Join(b, "; ")))
	}
	return out
}

func nv(v string) string { return `{"n":` + v + `}` }

// TestCustomEvictors drives the window operator with the custom evictors of
// udfs/evictor-c before, after and both before and after the window
// function, over global, tumbling and session windows, and checks the
// records each firing sees.
func TestCustomEvictors(t *testing.T) {
	global := func(count int64, e *plan.Evictor) plan.Window {
		return plan.Window{Type: plan.WindowGlobal, FnKind: abi.KindWindowProcess, Trigger: &plan.Trigger{Type: plan.TriggerCount, Count: count}, Evictor: e}
	}
	three := []optest.Step{
		optest.Step(strings.Join([]string{n("k", 1, "1"), n("k", 2, "30"), n("k", 3, "25")}, "; ")),
		optest.Step(strings.Join([]string{n("k", 4, "40"), n("k", 5, "5"), n("k", 6, "33")}, "; ")),
		"wm max",
	}
	tests := []struct {
		function string
		tc       triggerCase
	}{
		{"near_newest", triggerCase{
			name: "near_newest, before", plan: global(3, custom("before")), steps: three, keys: 1,
			// 1 is more than 10 from 25; then 5 from 33.
			want: lines(echoed("k", 2, 4, nv("30"), nv("25")), echoed("k", 2, 7, nv("30"), nv("25"), nv("40"), nv("33")), []string{"wm max"}),
		}},
		{"near_newest", triggerCase{
			name: "near_newest, after", plan: global(3, custom("after")), steps: three, keys: 1,
			// The window function sees every record; the second firing
			// what the first kept.
			want: lines(echoed("k", 1, 4, nv("1"), nv("30"), nv("25")), echoed("k", 2, 7, nv("30"), nv("25"), nv("40"), nv("5"), nv("33")), []string{"wm max"}),
		}},
		{"top2", triggerCase{
			name: "top2, both", plan: global(3, custom("both")), steps: three, keys: 1,
			// The second firing's top two are 40 and 33, which both keep.
			want: lines(echoed("k", 2, 4, nv("30"), nv("25")), echoed("k", 4, 7, nv("40"), nv("33")), []string{"wm max"}),
		}},
		{"top2", triggerCase{
			name: "top2, before, tumbling windows with the default trigger, of several keys in one firing",
			plan: plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, FnKind: abi.KindWindowProcess, Evictor: custom("before")},
			steps: steps([]string{n("a", 1, "1"), n("b", 2, "7"), n("a", 3, "9"), n("c", 4, "2"), n("a", 5, "4"), n("b", 6, "8"), n("b", 7, "9"), n("a", 12, "0")},
				[]string{"wm 9"}, []string{"wm max"}),
			want: lines(echoed("a", 0, 10, nv("9"), nv("4")), echoed("b", 0, 10, nv("8"), nv("9")), echoed("c", 0, 10, nv("2")), []string{"wm 9"},
				echoed("a", 10, 20, nv("0")), []string{"wm max"}),
		}},
		{"near_newest", triggerCase{
			name:  "near_newest, before, over merging sessions",
			plan:  plan.Window{Type: plan.WindowSession, Gap: 10, FnKind: abi.KindWindowProcess, Evictor: custom("before")},
			steps: steps([]string{n("k", 0, "100"), n("k", 8, "1"), n("k", 30, "7")}, []string{n("k", 15, "95")}, []string{"wm max"}),
			// [0,18) and [15,25) merge; the newest record (at 15) has 95.
			want: lines(echoed("k", 0, 25, nv("100"), nv("95")), echoed("k", 30, 40, nv("7")), []string{"wm max"}),
		}},
		{"top2", triggerCase{
			name:  "top2, after, with allowed lateness: the late firing sees what the first kept",
			plan:  plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Lateness: 5, FnKind: abi.KindWindowProcess, Evictor: custom("after")},
			steps: steps([]string{n("k", 1, "3"), n("k", 2, "1"), n("k", 3, "2")}, []string{"wm 9"}, []string{n("k", 4, "0")}, []string{"wm max"}),
			want:  lines(echoed("k", 0, 10, nv("3"), nv("1"), nv("2")), []string{"wm 9"}, echoed("k", 0, 10, nv("3"), nv("2"), nv("0")), []string{"wm max"}),
		}},
	}
	for _, tt := range tests {
		runTriggerCases(t, []triggerCase{tt.tc}, customEvictor(tt.function))
	}
}

// TestCustomEvictorFailures: a window the evictor fails, by an error or a
// trap, goes through on_udf_error and does not fire, while the other
// windows of the same call fire; under fail, the operator fails naming the
// function.
func TestCustomEvictorFailures(t *testing.T) {
	wp := plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, FnKind: abi.KindWindowProcess, Evictor: custom("before")}
	in := steps([]string{n("a", 1, "1"), n("b", 2, "2"), "c@3 crash", n("d", 4, "4"), "e@5 {}", n("f", 6, "6")}, []string{"wm max"})
	for _, mode := range []string{operator.OnErrorSkip, operator.OnErrorFail} {
		out := &optest.Tape{}
		w, c := testWindow(&wp, customEvictor("near_newest")(t), out, nil)
		w.policy.Mode = mode
		ctx := context.Background()
		var err error
		for _, st := range in {
			if err = st.Apply(ctx, w); err != nil {
				break
			}
		}
		if mode == operator.OnErrorFail {
			if err == nil || !strings.Contains(err.Error(), "near_newest") {
				t.Fatalf("fail: error %v, want one naming near_newest", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		optest.CheckLines(t, "results", out.Lines, lines(echoed("a", 0, 10, nv("1")), echoed("b", 0, 10, nv("2")),
			echoed("d", 0, 10, nv("4")), echoed("f", 0, 10, nv("6")), []string{"wm max"}))
		if got := c.Skipped.Load(); got != 2 {
			t.Fatalf("%d windows skipped, want 2 (the trap and the missing n)", got)
		}
	}
}

// TestCustomEvictorBadBitmap: an answer that is not a keep bitmap of the
// window fails the window with an error naming the function and window.
func TestCustomEvictorBadBitmap(t *testing.T) {
	for _, tt := range []struct {
		bitmap []byte
		want   string
	}{
		{nil, "keep bitmap of 0 bytes for 3 records, want 1"},
		{[]byte{0x0f}, "keep bitmap sets bits past record 2"},
		{[]byte{1, 0}, "keep bitmap of 2 bytes for 3 records, want 1"},
	} {
		if err := abi.CheckKeepBitmap(tt.bitmap, 3); err == nil || err.Error() != tt.want {
			t.Errorf("bitmap %x: error %v, want %q", tt.bitmap, err, tt.want)
		}
	}
	if err := abi.CheckKeepBitmap([]byte{0x05}, 3); err != nil {
		t.Fatal(err)
	}
}

// TestCustomEvictorSnapshot: what a custom evictor evicted is gone from the
// snapshot: a subtask restored after the first firing continues exactly as
// the one that ran on.
func TestCustomEvictorSnapshot(t *testing.T) {
	wp := plan.Window{Type: plan.WindowGlobal, FnKind: abi.KindWindowProcess, Trigger: &plan.Trigger{Type: plan.TriggerCount, Count: 3}, Evictor: custom("before")}
	first := steps([]string{n("k", 1, "1"), n("k", 2, "30"), n("k", 3, "25"), n("j", 1, "50")})
	rest := steps([]string{n("k", 4, "40"), n("k", 5, "5"), n("k", 6, "33"), n("j", 2, "1"), n("j", 3, "49")}, []string{"wm max"})
	fn := customEvictor("near_newest")(t)
	out := &optest.Tape{}
	w, _ := testWindow(&wp, fn, out, nil)
	optest.Run(t, w, first)
	optest.CheckLines(t, "first firing", out.Lines, echoed("k", 2, 4, nv("30"), nv("25")))
	snap := snapshotBytes(t, w)
	if bytes.Contains(snap, []byte(nv("1"))) {
		t.Fatal("the snapshot holds the evicted record")
	}
	restoredOut := &optest.Tape{}
	restored, _ := testWindow(&wp, fn, restoredOut, nil)
	if err := restored.Restore(context.Background(), []io.Reader{bytes.NewReader(snap)}, 128, state.RangeOf(128, 1, 0)); err != nil {
		t.Fatal(err)
	}
	optest.Run(t, restored, rest)
	optest.Run(t, w, rest)
	want := lines(echoed("k", 2, 7, nv("30"), nv("25"), nv("40"), nv("33")), echoed("j", 1, 4, nv("50"), nv("49")), []string{"wm max"})
	optest.CheckLines(t, "restored", restoredOut.Lines, want)
	optest.CheckLines(t, "ran on", out.Lines[3:], want)
}
