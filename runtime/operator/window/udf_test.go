package window

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
)

// udfWindowFunc makes the window function of a module function for testWindow.
func udfWindowFunc(t testing.TB, mod *host.Module, function string) func(w *Operator, out *operator.Out, policy *operator.ErrorPolicy) windowFunc {
	return udfWindowFuncGroups(t, mod, function, 3)
}

// udfWindowFuncGroups is udfWindowFunc with at most maxGroups groups per
// call: small in tests, to exercise frames split across calls; the job's
// batch size in benchmarks, as the runtime does.
func udfWindowFuncGroups(t testing.TB, mod *host.Module, function string, maxGroups int) func(w *Operator, out *operator.Out, policy *operator.ErrorPolicy) windowFunc {
	return func(w *Operator, out *operator.Out, policy *operator.ErrorPolicy) windowFunc {
		i := mod.Description.Lookup(function)
		if i < 0 {
			t.Fatalf("no function %s", function)
		}
		kind := mod.Description.Functions[i].Kind
		pool := mod.NewGuest(host.InstanceConfig{})
		t.Cleanup(func() { _ = pool.Close(context.Background()) })
		call := &operator.GroupRunner{Kind: kind, MaxGroups: maxGroups, Policy: policy, Out: out,
			Call: operator.GroupCall{Module: mod.ID, Function: function, Fn: i, Guest: pool}}
		if kind == abi.KindWindowProcess {
			return &udfProcessFunc{call: call, store: w.store, out: out, policy: policy, wm: &w.wm}
		}
		return &udfAccFunc{reduce: kind == abi.KindReduce, call: call, store: w.store, out: out, policy: policy, wm: &w.wm}
	}
}

// click is a record of key user with an amount and a page, as a window step.
func click(user string, ts int64, amount int, page string) optest.Step {
	return optest.Step(fmt.Sprintf(`%s@%d {"user":%q,"page":%q,"amount":%d}`, user, ts, user, page, amount))
}

func clicks(cs ...optest.Step) optest.Step {
	var parts []string
	for _, c := range cs {
		parts = append(parts, string(c))
	}
	return optest.Step(strings.Join(parts, "; "))
}

func TestWindowUDFGolden(t *testing.T) {
	tests := []struct {
		name     string
		module   string
		function string
		plan     plan.Window
		steps    []optest.Step
		want     []string
	}{
		{
			name: "aggregate over tumbling windows", module: "avg", function: "avg",
			plan: plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10},
			steps: []optest.Step{
				clicks(click("a", 1, 2, "/"), click("b", 3, 5, "/"), click("a", 12, 7, "/"), click("a", 5, 4, "/")), "wm 9",
				clicks(click("a", 15, 1, "/")), "wm max",
			},
			want: []string{
				`a@9 {"key":"a","window_start":0,"window_end":10,"avg":3,"count":2}`,
				`b@9 {"key":"b","window_start":0,"window_end":10,"avg":5,"count":1}`, "wm 9",
				`a@19 {"key":"a","window_start":10,"window_end":20,"avg":4,"count":2}`, "wm max",
			},
		},
		{
			name: "aggregate over sliding windows merges panes", module: "avg", function: "avg",
			plan: plan.Window{Type: plan.WindowSliding, Size: 30, Slide: 10},
			steps: []optest.Step{
				clicks(click("a", 1, 1, "/"), click("a", 11, 2, "/"), click("a", 21, 3, "/"), click("a", 22, 6, "/")), "wm max",
			},
			want: []string{
				`a@9 {"key":"a","window_start":-20,"window_end":10,"avg":1,"count":1}`,
				`a@19 {"key":"a","window_start":-10,"window_end":20,"avg":1.5,"count":2}`,
				`a@29 {"key":"a","window_start":0,"window_end":30,"avg":3,"count":4}`,
				`a@39 {"key":"a","window_start":10,"window_end":40,"avg":3.6666666666666665,"count":3}`,
				`a@49 {"key":"a","window_start":20,"window_end":50,"avg":4.5,"count":2}`, "wm max",
			},
		},
		{
			name: "session merging with an incremental aggregate", module: "avg", function: "avg",
			plan: plan.Window{Type: plan.WindowSession, Gap: 10},
			steps: []optest.Step{
				// [0,10) and [30,40); [20,30) extends the second; [10,20)
				// touches both and merges the three accumulators.
				clicks(click("a", 0, 1, "/"), click("a", 30, 3, "/")), clicks(click("a", 20, 5, "/")), clicks(click("a", 10, 7, "/")), "wm max",
			},
			want: []string{
				`a@39 {"key":"a","window_start":0,"window_end":40,"avg":4,"count":4}`, "wm max",
			},
		},
		{
			name: "reduce keeps the largest", module: "avg", function: "largest",
			plan: plan.Window{Type: plan.WindowSliding, Size: 20, Slide: 10},
			steps: []optest.Step{
				clicks(click("a", 1, 5, "/x"), click("a", 11, 3, "/y")), "wm max",
			},
			want: []string{
				`a@9 {"user":"a","page":"/x","amount":5}`,
				`a@19 {"user":"a","page":"/x","amount":5}`,
				`a@29 {"user":"a","page":"/y","amount":3}`, "wm max",
			},
		},
		{
			name: "process window over a session", module: "sessions", function: "summary",
			plan: plan.Window{Type: plan.WindowSession, Gap: 10},
			steps: []optest.Step{
				clicks(click("a", 5, 1, "/b"), click("a", 0, 2, "/a")), clicks(click("a", 30, 4, "/c"), click("a", 12, 1, "/b")), "wm max",
			},
			want: []string{
				`a@21 {"key":"a","window_start":0,"window_end":22,"events":3,"amount":4,"pages":["/a","/b"]}`,
				`a@39 {"key":"a","window_start":30,"window_end":40,"events":1,"amount":4,"pages":["/c"]}`, "wm max",
			},
		},
		{
			name: "count window with an aggregate", module: "avg", function: "avg",
			plan: plan.Window{Type: plan.WindowCount, Count: 2, CountSlide: 1},
			steps: []optest.Step{
				clicks(click("a", 1, 2, "/"), click("a", 2, 4, "/"), click("a", 3, 9, "/")), "wm max",
			},
			want: []string{
				`a@1 {"key":"a","window_start":1,"window_end":2,"avg":2,"count":1}`,
				`a@2 {"key":"a","window_start":1,"window_end":3,"avg":3,"count":2}`,
				`a@3 {"key":"a","window_start":2,"window_end":4,"avg":6.5,"count":2}`, "wm max",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := &optest.Tape{}
			w, _ := testWindow(&tt.plan, udfWindowFunc(t, optest.Module(t, tt.module), tt.function), out, nil)
			optest.Run(t, w, tt.steps)
			optest.CheckLines(t, "results", out.Lines, tt.want)
		})
	}
}
