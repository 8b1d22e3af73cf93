package window

import (
	"io"
	"log/slog"
	"testing"

	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
)

// windowBench drives a window operator (a built-in aggregate, or fn) with
// optest.Bench, into a sink that counts.
func windowBench(b *testing.B, wp plan.Window, keys, perMs int, fn func(w *Operator, out *operator.Out, policy *operator.ErrorPolicy) windowFunc) {
	out := &optest.Count{}
	c := newCounters()
	policy := &operator.ErrorPolicy{Mode: operator.OnErrorFail, Vertex: "win", Counts: &c.ErrorCounts, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	wo := &operator.Out{Max: 1024, Next: out}
	w := newWindowOp("win", &wp, &c.late, policy, wo, nil)
	if fn == nil {
		w.fn = &builtinFunc{name: wp.Builtin, field: wp.Field, policy: policy, out: wo}
	} else {
		w.fn = fn(w, wo, policy)
	}
	optest.Bench(b, w, keys, perMs, nil)
}

// Keyed tumbling count over 100,000 keys: 100 records per millisecond and
// 10 s windows, so each key has about 10 records per window.
func BenchmarkWindowTumblingBuiltin(b *testing.B) {
	windowBench(b, plan.Window{Type: plan.WindowTumbling, Size: 10_000, Slide: 10_000, Builtin: builtinCount}, 100_000, 100, nil)
}

// The same with the count UDF aggregate in Wasm, written with the Go SDK
// (udfs/avg), the C SDK (udfs/avg-c) and the Rust SDK (udfs/avg-rust).
func BenchmarkWindowTumblingWasm(b *testing.B) {
	for _, udf := range []string{"avg", "avg-c", "avg-rust"} {
		b.Run(udf, func(b *testing.B) {
			mod := optest.Module(b, udf)
			windowBench(b, plan.Window{Type: plan.WindowTumbling, Size: 10_000, Slide: 10_000}, 100_000, 100, udfWindowFuncGroups(b, mod, "count", 1024))
		})
	}
}

// Sliding and tumbling windows with the built-in count over 1,000 keys
// (about 100 records per key and second) and 100,000 keys (about one):
// sliding 10 s by 1 s against tumbling 10 s (the same windows' size) and
// tumbling 1 s (the same number of results).
func BenchmarkWindowSlidingBuiltin(b *testing.B) {
	for _, tt := range []struct {
		name string
		plan plan.Window
		keys int
	}{
		{"sliding-10s-by-1s", plan.Window{Type: plan.WindowSliding, Size: 10_000, Slide: 1_000, Builtin: builtinCount}, 1_000},
		{"tumbling-10s", plan.Window{Type: plan.WindowTumbling, Size: 10_000, Slide: 10_000, Builtin: builtinCount}, 1_000},
		{"tumbling-1s", plan.Window{Type: plan.WindowTumbling, Size: 1_000, Slide: 1_000, Builtin: builtinCount}, 1_000},
		{"sliding-10s-by-1s-100k-keys", plan.Window{Type: plan.WindowSliding, Size: 10_000, Slide: 1_000, Builtin: builtinCount}, 100_000},
		{"tumbling-10s-100k-keys", plan.Window{Type: plan.WindowTumbling, Size: 10_000, Slide: 10_000, Builtin: builtinCount}, 100_000},
		{"tumbling-1s-100k-keys", plan.Window{Type: plan.WindowTumbling, Size: 1_000, Slide: 1_000, Builtin: builtinCount}, 100_000},
	} {
		b.Run(tt.name, func(b *testing.B) { windowBench(b, tt.plan, tt.keys, 100, nil) })
	}
}

// Session windows (gap 1 s) with the built-in count over 100,000 keys: a
// key's records come about a second apart, so sessions keep growing.
func BenchmarkWindowSessionBuiltin(b *testing.B) {
	windowBench(b, plan.Window{Type: plan.WindowSession, Gap: 1_000, Builtin: builtinCount}, 100_000, 100, nil)
}

// A window_process function with per-window state (udfs/firings, which
// reads and writes a value state per firing) over 10,000 keys and 1 s
// tumbling windows, about 10 records per key and window, with the state in
// the memory and the Pebble backend.
func BenchmarkWindowProcessState(b *testing.B) {
	for _, backend := range backends {
		b.Run(backend, func(b *testing.B) {
			wp := plan.Window{Type: plan.WindowTumbling, Size: 1_000, Slide: 1_000, States: true}
			windowBench(b, wp, 10_000, 100, windowStateFunc(b, backend, &wp, "firings", "count", 1, 0, 1024))
		})
	}
}

// Triggered windows (triggered.go) with the built-in count over 100,000
// keys and 10 s tumbling windows (about 10 records per key and window):
// the default trigger given explicitly (the triggered path against
// BenchmarkWindowTumblingBuiltin's panes), a purging count trigger, a
// continuous event-time trigger every second, and a global window with a
// purging count trigger of 10.
func BenchmarkWindowTriggers(b *testing.B) {
	tumbling := func(t plan.Trigger) plan.Window {
		return plan.Window{Type: plan.WindowTumbling, Size: 10_000, Slide: 10_000, Builtin: builtinCount, Trigger: &t}
	}
	for _, tt := range []struct {
		name string
		plan plan.Window
	}{
		{"event-time", tumbling(plan.Trigger{Type: plan.TriggerEventTime})},
		{"count-5-purge", tumbling(plan.Trigger{Type: plan.TriggerCount, Count: 5, Purge: true})},
		{"continuous-1s", tumbling(plan.Trigger{Type: plan.TriggerContinuousEventTime, Interval: 1_000})},
		{"global-count-10-purge", plan.Window{Type: plan.WindowGlobal, Builtin: builtinCount, Trigger: &plan.Trigger{Type: plan.TriggerCount, Count: 10, Purge: true}}},
	} {
		b.Run(tt.name, func(b *testing.B) { windowBench(b, tt.plan, 100_000, 100, nil) })
	}
}

// Custom triggers (udftrigger.go) with the built-in count over 100,000
// keys and 10 s tumbling windows, as BenchmarkWindowTriggers: the early
// trigger of udfs/trigger in Go and in Rust, which answers every record
// and fires each window at its end (no record is urgent), against the
// built-in event_time trigger there.
func BenchmarkWindowCustomTrigger(b *testing.B) {
	for _, module := range triggerModules {
		b.Run(module, func(b *testing.B) {
			wp := plan.Window{Type: plan.WindowTumbling, Size: 10_000, Slide: 10_000, Builtin: builtinCount, Trigger: &plan.Trigger{Type: plan.TriggerCustom}}
			gc := optest.GroupCall(b, optest.Module(b, module), "early")
			windowBench(b, wp, 100_000, 100, func(w *Operator, out *operator.Out, policy *operator.ErrorPolicy) windowFunc {
				w.trig.udf = &udfTrigger{call: &gc, maxGroups: 1024}
				return &builtinFunc{name: wp.Builtin, field: wp.Field, policy: policy, out: out}
			})
		})
	}
}
