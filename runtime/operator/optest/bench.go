package optest

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/internal/cputime"
	"wasmstream.io/platform/runtime/operator"
)

// Bench drives s with b.N records of keys keys, perMs records per
// millisecond of event time, in batches of 1024 with a watermark (the
// batch's largest timestamp - 1) after each batch; before, when set, runs
// ahead of the batch that starts at record n. It reports records per CPU
// second of the process (garbage collection included) and closes s.
func Bench(b *testing.B, s operator.Stage, keys, perMs int, before func(n int)) {
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
	cpu := cputime.Process()
	for n := 0; n < b.N; {
		m := min(batch, b.N-n)
		for j := 0; j < m; j++ {
			i := n + j
			recs[j] = abi.Record{Key: keyBytes[(i*7919)%keys], Value: values[i%len(values)], Timestamp: int64(i / perMs)}
		}
		if before != nil {
			before(n)
		}
		if err := s.Process(ctx, recs[:m]); err != nil {
			b.Fatal(err)
		}
		n += m
		if err := s.Advance(ctx, recs[m-1].Timestamp-1); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if used := cputime.Process() - cpu; used > 0 {
		b.ReportMetric(float64(b.N)/(float64(used)/1e9), "records/cpu-s")
	}
	_ = s.Close(ctx)
}

// JoinBench is Bench for a two-input operator: batches alternate between
// the left and the right input. It also reports output pairs per input
// record.
func JoinBench(b *testing.B, keys, perMs int, join func(out *operator.Out, in *operator.Inputs) operator.Stage) {
	out := &Count{}
	in := &operator.Inputs{Split: 1}
	Bench(b, join(&operator.Out{Max: 1024, Next: out}, in), keys, perMs, func(n int) { in.From(n / 1024 % 2) })
	b.ReportMetric(float64(out.N)/float64(b.N), "pairs/record")
}
