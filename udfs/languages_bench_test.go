package udfs

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
)

// benchLanguages are the wordcount modules of every language, by language.
var benchLanguages = []struct{ name, module string }{
	{"go", "wordcount"}, {"rust", "wordcount-rust"}, {"c", "wordcount-c"}, {"assemblyscript", "wordcount-as"},
}

// benchLines is a frame of batchSize lines of 3 to 10 words in several
// scripts, about 60 bytes each.
func benchLines() []byte {
	words := []string{"Stream", "wasm", "Flink", "nats", "JetStream", "key", "Window", "état", "größe", "2024", "x1", "naïve", "Über", "Ελλάδα"}
	seps := []string{" ", ", ", "; ", "! ", " -- ", "\t", "..."}
	rng := rand.New(rand.NewSource(42))
	recs := make([]abi.Record, batchSize)
	for i := range recs {
		var b strings.Builder
		for range 3 + rng.Intn(8) {
			b.WriteString(words[rng.Intn(len(words))])
			b.WriteString(seps[rng.Intn(len(seps))])
		}
		recs[i] = abi.Record{Key: []byte("line"), Value: []byte(b.String()), Timestamp: int64(i)}
	}
	return frame(recs)
}

// BenchmarkWordcountLanguages measures the records per second of the
// wordcount split function in every language through the platform's host
// (package host, as a job's operator calls it): one Guest.Call per batch,
// which writes the input frame into the instance and runs platform_call,
// then decoding every output entry. It reports the module's size too.
func BenchmarkWordcountLanguages(b *testing.B) {
	f := benchLines()
	ctx := context.Background()
	h, err := host.New(ctx, host.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(ctx)
	for _, lang := range benchLanguages {
		b.Run(lang.name, func(b *testing.B) {
			wasm := wasmOf(b, lang.module)
			mod, err := h.Compile(ctx, wasm)
			if err != nil {
				b.Fatal(err)
			}
			pool := mod.NewGuest(host.InstanceConfig{})
			defer pool.Close(ctx)
			var out abi.OutputReader
			var e abi.Entry
			words := 0
			for b.Loop() {
				frame, err := pool.Call(ctx, mod.Description.Lookup("split"), f)
				if err != nil {
					b.Fatal(err)
				}
				if err := out.Reset(frame, batchSize); err != nil {
					b.Fatal(err)
				}
				for words = 0; out.Next(&e); words++ {
				}
				if err := out.Err(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*batchSize/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(b.N*words)/b.Elapsed().Seconds(), "words/s")
			b.ReportMetric(float64(len(wasm)), "module-bytes")
		})
	}
}

// BenchmarkInstantiateLanguages measures the time to instantiate each
// language's wordcount module and run its _initialize and its
// self-description, as the host does for a new instance; compiling is done
// once, before.
func BenchmarkInstantiateLanguages(b *testing.B) {
	ctx := context.Background()
	rt := newRuntime(wazero.NewRuntimeConfig().WithMemoryLimitPages(memoryLimitPages))
	defer rt.Close(ctx)
	for _, lang := range benchLanguages {
		b.Run(lang.name, func(b *testing.B) {
			cm := compiled(b, rt, lang.module)
			cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions(abi.ExportInitialize)
			for b.Loop() {
				mod, err := rt.InstantiateModule(ctx, cm, cfg)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := mod.ExportedFunction(abi.ExportDescribe).Call(ctx); err != nil {
					b.Fatal(err)
				}
				if err := mod.Close(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCompileLanguages measures compiling each language's wordcount
// module, which the host does once per module and memory limit.
func BenchmarkCompileLanguages(b *testing.B) {
	ctx := context.Background()
	for _, lang := range benchLanguages {
		b.Run(lang.name, func(b *testing.B) {
			wasm := wasmOf(b, lang.module)
			rt := wazero.NewRuntime(ctx)
			defer rt.Close(ctx)
			for b.Loop() {
				cm, err := rt.CompileModule(ctx, wasm)
				if err != nil {
					b.Fatal(err)
				}
				if err := cm.Close(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(wasm)), "module-bytes")
		})
	}
}

// BenchmarkAverageLanguages measures the records per second of the windowed
// average (udfs/avg's avg aggregate) in every language through the host:
// one add call per batch of batchSize clicks of 16 keys, each group
// starting from a stored accumulator, as a window operator folds a batch
// into its windows' accumulators.
func BenchmarkAverageLanguages(b *testing.B) {
	ctx := context.Background()
	h, err := host.New(ctx, host.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(ctx)
	const keys = 16
	f := abi.AppendFrameHead(nil, abi.FrameHead{Op: abi.OpAdd, Watermark: abi.NoWatermark, Groups: keys})
	for k := range keys {
		g := abi.GroupHead{Flags: abi.GroupAcc, Key: []byte(fmt.Sprintf("user-%02d", k)), Acc: meanAcc(10, 4321)}
		f = abi.AppendGroupHead(f, &g, batchSize/keys)
		for i := range batchSize / keys {
			r := abi.Record{Key: g.Key, Value: fmt.Appendf(nil, `{"user":"user-%02d","page":"/p","amount":%d,"ts":%d}`, k, i*7%1000, i), Timestamp: int64(i)}
			f = abi.AppendRecord(f, &r)
		}
	}
	for _, lang := range []struct{ name, module string }{{"go", "avg"}, {"rust", "avg-rust"}, {"c", "avg-c"}, {"assemblyscript", "avg-as"}} {
		b.Run(lang.name, func(b *testing.B) {
			wasm := wasmOf(b, lang.module)
			mod, err := h.Compile(ctx, wasm)
			if err != nil {
				b.Fatal(err)
			}
			pool := mod.NewGuest(host.InstanceConfig{})
			defer pool.Close(ctx)
			fn := mod.Description.Lookup("avg")
			var out abi.OutputReader
			var e abi.Entry
			for b.Loop() {
				frame, err := pool.Call(ctx, fn, f)
				if err != nil {
					b.Fatal(err)
				}
				if err := out.Reset(frame, keys); err != nil {
					b.Fatal(err)
				}
				n := 0
				for ; out.Next(&e); n++ {
				}
				if err := out.Err(); err != nil || n != keys || e.Tag != abi.TagAccumulator {
					b.Fatalf("%d entries, last %+v, %v", n, e, err)
				}
			}
			b.ReportMetric(float64(b.N)*batchSize/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(len(wasm)), "module-bytes")
		})
	}
}

// BenchmarkJSONMap measures the records per second of udfs/jsonmap's
// bid_eur (read five fields of a Nexmark bid in JSON, convert the price to
// euros, write a new object) through the host, one Guest.Call per batch of
// batchSize bids: written with encoding/json (go-encoding-json,
// udfs/jsonmap-std) and with the SDKs' JSON scanners and writers in every
// language.
func BenchmarkJSONMap(b *testing.B) {
	ctx := context.Background()
	h, err := host.New(ctx, host.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(ctx)
	bids := nexmarkBids(batchSize, 2)
	recs := make([]abi.Record, len(bids))
	for i, v := range bids {
		recs[i] = abi.Record{Value: v, Timestamp: int64(i)}
	}
	f := frame(recs)
	for _, lang := range []struct{ name, module string }{
		{"go-encoding-json", "jsonmap-std"}, {"go", "jsonmap"}, {"rust", "jsonmap-rust"}, {"c", "jsonmap-c"}, {"assemblyscript", "jsonmap-as"},
	} {
		b.Run(lang.name, func(b *testing.B) {
			wasm := wasmOf(b, lang.module)
			mod, err := h.Compile(ctx, wasm)
			if err != nil {
				b.Fatal(err)
			}
			pool := mod.NewGuest(host.InstanceConfig{})
			defer pool.Close(ctx)
			fn := mod.Description.Lookup("bid_eur")
			var out abi.OutputReader
			var e abi.Entry
			for b.Loop() {
				frame, err := pool.Call(ctx, fn, f)
				if err != nil {
					b.Fatal(err)
				}
				if err := out.Reset(frame, batchSize); err != nil {
					b.Fatal(err)
				}
				n := 0
				for ; out.Next(&e); n++ {
					if e.Tag != abi.TagRecord {
						b.Fatalf("entry %d: %+v", n, e)
					}
				}
				if err := out.Err(); err != nil || n != batchSize {
					b.Fatalf("%d entries, %v", n, err)
				}
			}
			records := float64(b.N) * batchSize
			b.ReportMetric(records/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/records, "ns/record")
			b.ReportMetric(float64(len(wasm)), "module-bytes")
		})
	}
}
