package window

import (
	"io"
	"log/slog"
	"testing"

	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
)

// Tumbling 10 s window join with the built-in output over 100,000 keys at
// 100 records per millisecond: about 5 records of each side per key and
// window.
func BenchmarkJoinWindowTumbling(b *testing.B) {
	optest.JoinBench(b, 100_000, 100, func(out *operator.Out, in *operator.Inputs) operator.Stage {
		c := newCounters()
		policy := &operator.ErrorPolicy{Mode: operator.OnErrorFail, Vertex: "join", Counts: &c.ErrorCounts, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		w := newWindowOp("join", &plan.Window{Type: plan.WindowTumbling, Size: 10_000, Slide: 10_000}, &c.late, policy, out, nil)
		w.fn = &windowJoinFunc{inputs: in, store: w.store, out: out, policy: policy, wm: &w.wm}
		return w
	})
}
