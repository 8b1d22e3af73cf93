package host

import (
	"bytes"
	"context"
	"testing"

	"wasmstream.io/platform/abi"
)

// BenchmarkCall maps a frame of 1024 records with 100-byte values through
// the WAT upper-case function.
func BenchmarkCall(b *testing.B) {
	h, _ := newHost(b, "")
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
