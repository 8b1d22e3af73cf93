package process

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/state"
)

// A keyed process function in Wasm (udfs/dedup, Go SDK) with value state
// over 10,000 keys at 100 records per millisecond: after the first records
// of each key, it emits nothing, so this is the cost of grouping, calling
// and state.
func BenchmarkProcessDedup(b *testing.B) {
	mod := optest.Module(b, "dedup")
	descs, err := operator.StateDescriptors(mod.Description, nil)
	if err != nil {
		b.Fatal(err)
	}
	keyed, err := state.Open(state.Config{MaxParallelism: 128, Range: state.RangeOf(128, 1, 0), States: descs})
	if err != nil {
		b.Fatal(err)
	}
	policy := &operator.ErrorPolicy{Mode: operator.OnErrorFail, Vertex: "op", Counts: &operator.ErrorCounts{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	op := New("op", optest.GroupCall(b, mod, "dedup"), nil, keyed, 1024, policy, &optest.Count{})
	b.Cleanup(func() { _ = op.Close(context.Background()) })
	optest.Bench(b, op, 10_000, 100, nil)
}
