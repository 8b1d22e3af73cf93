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

// JoinBench drives a join operator with b.N records of keys keys, perMs
// records per millisecond of event time, in batches of 1024 that alternate
// between the left and the right input, with a watermark (the batch's
// largest timestamp - 1) after each batch, into a sink that counts. It
// reports input records and output pairs per CPU second of the process.
func JoinBench(b *testing.B, keys, perMs int, join func(out *operator.Out, in *operator.Inputs) operator.Stage) {
	out := &Count{}
	in := &operator.Inputs{Split: 1}
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
	cpu := cputime.Process()
	for n := 0; n < b.N; {
		m := min(batch, b.N-n)
		for j := 0; j < m; j++ {
			i := n + j
			recs[j] = abi.Record{Key: keyBytes[(i*7919)%keys], Value: values[i%len(values)], Timestamp: int64(i / perMs)}
		}
		in.From(n / batch % 2)
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
		b.ReportMetric(float64(out.N)/float64(b.N), "pairs/record")
	}
	_ = s.Close(ctx)
}
