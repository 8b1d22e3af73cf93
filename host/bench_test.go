package host

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"wasmstream.io/platform/abi"
)

// BenchmarkCall maps a frame of 1024 records with 100-byte values through
// the WAT upper-case function.
func BenchmarkCall(b *testing.B) {
	h, _ := newHost(b, "")
	benchCallUpper(b, h)
}

// benchCallUpper runs the upper function of the udf fixture on h over a
// frame of 1024 records of 100 bytes.
func benchCallUpper(b *testing.B, h *Host) {
	m := compileFixture(b, h, "udf")
	p := newPool(b, m, InstanceConfig{})
	const records = 1024
	rs := make([]abi.Record, records)
	for i := range rs {
		rs[i] = abi.Record{Key: []byte("key"), Value: bytes.Repeat([]byte{'a' + byte(i%26)}, 100), Timestamp: int64(i)}
	}
	frame := inputFrame(rs...)
	ctx := context.Background()
	if _, err := p.Call(ctx, fnUpper, frame); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Call(ctx, fnUpper, frame); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*records/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkCallOverhead is the fixed cost of a Call: a one-record frame.
func BenchmarkCallOverhead(b *testing.B) {
	h, _ := newHost(b, "")
	m := compileFixture(b, h, "udf")
	p := newPool(b, m, InstanceConfig{})
	frame := inputFrame(values("value")...)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Call(ctx, fnUpper, frame); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileCached is what a restart pays for the Go module when the
// compilation cache dir is warm: a new Host, Compile (with its validation
// instance) and Close.
func BenchmarkCompileCached(b *testing.B) {
	wasm := goModuleWasm(b)
	dir := b.TempDir()
	ctx := context.Background()
	compile := func() {
		h, err := New(ctx, Config{CacheDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := h.Compile(ctx, wasm); err != nil {
			b.Fatal(err)
		}
		if err := h.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
	compile()
	for b.Loop() {
		compile()
	}
}

// BenchmarkGuestDeadlines compares what a call costs with each way of
// bounding guest calls, for the WAT upper-case function and the Go one:
// "close-on-done" is wazero's WithCloseOnContextDone with a cancellable
// context (how the host stopped calls before it instrumented modules),
// "instrumented" the host's checks, "unbounded" neither (the floor), all
// called straight through wazero, and "pool" the host's Guest.Call;
// "native" does the same work in Go, without Wasm. Frames of 1 record give
// the cost of a call, frames of 1024 records of 100 bytes the throughput.
func BenchmarkGuestDeadlines(b *testing.B) {
	guests := []struct {
		name string
		wasm func(testing.TB) []byte
	}{
		{"wat", func(tb testing.TB) []byte { return fixture(tb, "udf") }},
		{"go", goModuleWasm},
	}
	for _, g := range guests {
		wasm := g.wasm(b)
		instrumented, err := instrument(wasm)
		if err != nil {
			b.Fatal(err)
		}
		for _, records := range []int{1, 1024} {
			rs := make([]abi.Record, records)
			for i := range rs {
				rs[i] = abi.Record{Key: []byte("key"), Value: bytes.Repeat([]byte{'a' + byte(i%26)}, 100), Timestamp: int64(i)}
			}
			frame := inputFrame(rs...)
			prefix := fmt.Sprintf("%s/records=%d/", g.name, records)
			if g.name == guests[0].name {
				b.Run(fmt.Sprintf("native/records=%d", records), func(b *testing.B) {
					var out, value []byte
					benchmarkCalls(b, func() error { out, value = nativeUpper(out, value, frame); return nil }, records)
				})
			}
			b.Run(prefix+"close-on-done", func(b *testing.B) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				benchmarkRaw(b, newRawGuest(b, ctx, rawRuntime(b, true), wasm), frame, records)
			})
			b.Run(prefix+"instrumented", func(b *testing.B) {
				benchmarkRaw(b, newRawGuest(b, context.Background(), rawRuntime(b, false), instrumented), frame, records)
			})
			b.Run(prefix+"unbounded", func(b *testing.B) {
				benchmarkRaw(b, newRawGuest(b, context.Background(), rawRuntime(b, false), wasm), frame, records)
			})
			b.Run(prefix+"pool", func(b *testing.B) {
				h, _ := newHost(b, "")
				m, err := h.Compile(context.Background(), wasm)
				if err != nil {
					b.Fatal(err)
				}
				p := newPool(b, m, InstanceConfig{})
				benchmarkCalls(b, func() error { _, err := p.Call(context.Background(), 0, frame); return err }, records)
			})
		}
	}
}

// nativeUpper maps an input frame to its upper-cased output frame in out,
// as the guests' upper functions do, using value as scratch.
func nativeUpper(out, value, frame []byte) ([]byte, []byte) {
	var in abi.InputReader
	var rec abi.Record
	if err := in.Reset(frame); err != nil {
		panic(err)
	}
	out = abi.AppendInputHeader(out[:0], in.Count())
	for i := uint32(0); in.Next(&rec); i++ {
		value = value[:0]
		for _, c := range rec.Value {
			if c-'a' < 26 {
				c -= 'a' - 'A'
			}
			value = append(value, c)
		}
		out = abi.AppendEntryRecord(out, i, 0, &abi.Record{Value: value})
	}
	return out, value
}

func benchmarkRaw(b *testing.B, g *rawGuest, frame []byte, records int) {
	benchmarkCalls(b, func() error { _, err := g.run(0, frame); return err }, records)
}

// benchmarkCalls measures call, which runs a frame of records, in wall
// time and, where it can, in the process's CPU time: records per CPU
// second are what a busy machine gets.
func benchmarkCalls(b *testing.B, call func() error, records int) {
	if err := call(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	start, ok := processCPU()
	for b.Loop() {
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
	end, measured := processCPU()
	n := float64(b.N)
	b.ReportMetric(n*float64(records)/b.Elapsed().Seconds(), "records/s")
	if ok && measured {
		b.ReportMetric(float64(end-start)/n, "cpu-ns/op")
		b.ReportMetric(n*float64(records)/(end-start).Seconds(), "records/cpu-s")
	}
}

// BenchmarkInstrument is what instrumenting adds to Compile for the Go
// test module (a few MB; compiling it takes about half a second).
func BenchmarkInstrument(b *testing.B) {
	wasm := goModuleWasm(b)
	b.SetBytes(int64(len(wasm)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := instrument(wasm); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallMemory is BenchmarkCall with the guest's memory a mapping
// (the default on Linux) and a Go slice (elsewhere, and wazero's own
// allocation): one process, so that the two compare on a noisy machine.
func BenchmarkCallMemory(b *testing.B) {
	for _, mapped := range []bool{true, false} {
		name := map[bool]string{true: "mapped", false: "slice"}[mapped]
		b.Run(name, func(b *testing.B) {
			h, _ := newHost(b, "")
			h.mapMemory = mapped && mapMemoryDefault
			benchCallUpper(b, h)
		})
	}
}

// BenchmarkInstantiateMemory is what making and closing an instance costs
// with each kind of memory, its budget reservation included.
func BenchmarkInstantiateMemory(b *testing.B) {
	for _, mapped := range []bool{true, false} {
		name := map[bool]string{true: "mapped", false: "slice"}[mapped]
		b.Run(name, func(b *testing.B) {
			h, _ := newHost(b, "")
			h.mapMemory = mapped && mapMemoryDefault
			m := compileFixture(b, h, "udf")
			ctx := context.Background()
			c, err := m.compiledFor(ctx, limitPages(DefaultMemoryLimit))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				inst, err := c.instantiate(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if err := inst.close(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
