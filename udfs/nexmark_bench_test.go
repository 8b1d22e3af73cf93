package udfs

import (
	"context"
	"log/slog"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/internal/cputime"
	"wasmstream.io/platform/internal/nexmark"
)

// nexmarkModules are the modules with functions of the Nexmark queries,
// by language, and the functions each has.
var nexmarkModules = []struct {
	lang, module string
	functions    []string
}{
	{"go", "nexmark", []string{"bids", "q0", "q1", "q2", "q14", "q21", "q22"}},
	{"rust", "nexmark-rust", []string{"bids", "q0", "q1", "q2"}},
}

// BenchmarkNexmarkFlatMaps measures the events per second of the Nexmark
// queries' flat maps over the generator's events (a batch of 1024, as a job
// calls them), through the platform's host: one Guest.Call per batch, then
// decoding every output entry. This is the Wasm work of queries 0, 1 and 2
// in a job, without the generator and the exchange.
func BenchmarkNexmarkFlatMaps(b *testing.B) {
	ctx := context.Background()
	h, err := host.New(ctx, host.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(ctx)
	g, err := nexmark.New(nexmark.Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	recs := make([]abi.Record, batchSize)
	for i := range recs {
		recs[i] = abi.Record{Value: g.AppendEvent(nil, int64(i)), Timestamp: g.Timestamp(int64(i))}
	}
	f := frame(recs)
	for _, m := range nexmarkModules {
		wasm := wasmOf(b, m.module)
		mod, err := h.Compile(ctx, wasm)
		if err != nil {
			b.Fatal(err)
		}
		pool := mod.NewGuest(host.InstanceConfig{})
		for _, name := range m.functions {
			b.Run(name+"/"+m.lang, func(b *testing.B) {
				fn := mod.Description.Lookup(name)
				var out abi.OutputReader
				var e abi.Entry
				cpu := cputime.Process()
				for b.Loop() {
					frame, err := pool.Call(ctx, fn, f)
					if err != nil {
						b.Fatal(err)
					}
					if err := out.Reset(frame, batchSize); err != nil {
						b.Fatal(err)
					}
					for out.Next(&e) {
						if e.Tag == abi.TagError {
							b.Fatalf("error: %s", e.Message)
						}
					}
					if err := out.Err(); err != nil {
						b.Fatal(err)
					}
				}
				events := float64(b.N) * batchSize
				b.ReportMetric(events/b.Elapsed().Seconds(), "events/s")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/events, "ns/event")
				b.ReportMetric(float64(cputime.Process()-cpu)/events, "cpu-ns/event")
			})
		}
		pool.Close(ctx)
	}
}
