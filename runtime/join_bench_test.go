package runtime

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
)

// joinBench drives a join operator with b.N records of keys keys, perMs
// records per millisecond of event time, in batches of 1024 that alternate
// between the left and the right input, with a watermark (the batch's
// largest timestamp - 1) after each batch, into a sink that counts. It
// reports input records and output pairs per CPU second of the process.
func joinBench(b *testing.B, keys, perMs int, join func(out *operator.Out, in *joinInputs) operator.Stage) {
	out := &countSink{}
	in := &joinInputs{split: 1}
	s := join(&operator.Out{Max: 1024, Next: out}, in)
	keyBytes := make([][]byte, keys)
	for i := range keyBytes {
		keyBytes[i] = []byte(fmt.Sprintf("user-%06d", i))
	}
	values := make([][]byte, 64)
	for i := range values {
		values[i] = []byte(`{"page":"/p","amount":` + strconv.Itoa(i*17%1000) + `}`)
	}
	const batch = 1024
	recs := make([]abi.Record, batch)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPUNanos()
	for n := 0; n < b.N; {
		m := min(batch, b.N-n)
		for j := 0; j < m; j++ {
			i := n + j
			recs[j] = abi.Record{Key: keyBytes[(i*7919)%keys], Value: values[i%len(values)], Timestamp: int64(i / perMs)}
		}
		in.from(n / batch % 2)
		if err := s.Process(ctx, recs[:m]); err != nil {
			b.Fatal(err)
		}
		n += m
		if err := s.Advance(ctx, recs[m-1].Timestamp-1); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if used := processCPUNanos() - cpu; used > 0 {
		b.ReportMetric(float64(b.N)/(float64(used)/1e9), "records/cpu-s")
		b.ReportMetric(float64(out.n)/float64(b.N), "pairs/record")
	}
	_ = s.Close(ctx)
}

// Interval join +/- 5 s over 100,000 keys at 100 records per millisecond:
// each key has a record every second, so each record meets about 5 of the
// other side.
func BenchmarkJoinInterval(b *testing.B) {
	joinBench(b, 100_000, 100, func(out *operator.Out, in *joinInputs) operator.Stage {
		return newIntervalJoin("join", &plan.Join{Interval: true, Lower: -5000, Upper: 5000}, in, 1<<32, newCounters(), out, nil)
	})
}

// Tumbling 10 s window join with the built-in output over 100,000 keys at
// 100 records per millisecond: about 5 records of each side per key and
// window.
func BenchmarkJoinWindowTumbling(b *testing.B) {
	joinBench(b, 100_000, 100, func(out *operator.Out, in *joinInputs) operator.Stage {
		c := newCounters()
		policy := &operator.ErrorPolicy{Mode: operator.OnErrorFail, Vertex: "join", Counts: &c.ErrorCounts, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		w := newWindowOp("join", &plan.Window{Type: plan.WindowTumbling, Size: 10_000, Slide: 10_000}, &c.late, policy, out, nil)
		w.fn = &windowJoinFunc{inputs: in, store: w.store, out: out, policy: policy, wm: &w.wm}
		return w
	})
}
