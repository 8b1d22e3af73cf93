package join

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"testing"

	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
)

// benchJoinState is an interval join holding 100,000 records of each side
// over 10,000 keys, with values like BenchmarkJoinInterval's.
func benchJoinState(b *testing.B) (*plan.Join, *Interval) {
	plan := &plan.Join{Interval: true, Lower: -1 << 40, Upper: 1 << 40}
	j := newIntervalJoin("join", plan, &operator.Inputs{Split: 1}, 1<<32, new(atomic.Int64), &operator.Out{Max: 1024, Next: &optest.Count{}}, nil)
	value := []byte(`{"page":"/p","amount":123}`)
	for side := range 2 {
		for i := range 100_000 {
			key := fmt.Appendf(nil, "user-%06d", i%10_000)
			if err := j.buffer(side, key, int64(i), value); err != nil {
				b.Fatal(err)
			}
		}
	}
	return plan, j
}

// BenchmarkIntervalJoinSnapshot encodes the snapshot of 200,000 buffered
// records; it reports the cost per record.
func BenchmarkIntervalJoinSnapshot(b *testing.B) {
	_, j := benchJoinState(b)
	b.ReportAllocs()
	b.ResetTimer()
	var n int
	for range b.N {
		n = len(j.encode())
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/200_000, "ns/record")
	b.SetBytes(int64(n))
}

// BenchmarkIntervalJoinRestore restores that snapshot into a new join.
func BenchmarkIntervalJoinRestore(b *testing.B) {
	plan, j := benchJoinState(b)
	snap := j.encode()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		r := newIntervalJoin("join", plan, &operator.Inputs{Split: 1}, 1<<32, new(atomic.Int64), &operator.Out{Max: 1024, Next: &optest.Count{}}, nil)
		if err := r.Restore(context.Background(), []io.Reader{bytes.NewReader(snap)}, 128, state.RangeOf(128, 1, 0)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/200_000, "ns/record")
}
