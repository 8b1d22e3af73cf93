package lookup

import (
	"context"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator/optest"
)

// memFetcher answers every KV lookup at once from memory, so that the
// benchmark measures the operator and the two calls into the guest.
type memFetcher struct{ value []byte }

func (f memFetcher) Fetch(_ context.Context, _ *abi.LookupRequest, _ int) (abi.LookupResult, error) {
	return abi.LookupResult{Status: abi.LookupFound, Value: f.value}, nil
}

// BenchmarkLookup runs batches of 64 records through the request call,
// the lookups and the result call, in both output modes.
func BenchmarkLookup(b *testing.B) {
	for _, ordered := range []bool{true, false} {
		name := "unordered"
		if ordered {
			name = "ordered"
		}
		b.Run(name, func(b *testing.B) {
			count := &optest.Count{}
			cfg := config(b, "ask_kv", count, memFetcher{value: []byte(`{"name":"Ann"}`)})
			cfg.Ordered, cfg.Capacity = ordered, 128
			op := New(cfg)
			defer op.Close(context.Background())
			recs := make([]abi.Record, 64)
			for i := range recs {
				recs[i] = abi.Record{Key: []byte("o"), Value: []byte(`{"user":"u1"}`), Timestamp: int64(i)}
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := op.Process(ctx, recs); err != nil {
					b.Fatal(err)
				}
			}
			if err := op.Finish(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "records/s")
			if count.N != int64(b.N*len(recs)) {
				b.Fatalf("%d outputs, want %d", count.N, b.N*len(recs))
			}
		})
	}
}
