package udfs

import (
	"bytes"
	"context"
	"testing"

	"github.com/tetratelabs/wazero"

	"wasmstream.io/platform/abi"
)

// batchSize is the records per call, a job's default.
const batchSize = 1024

// BenchmarkUpper measures the records per second of the upper map function
// built with the Go SDK and hand-written in WAT, over the whole host round
// trip of a batch: platform_alloc, writing the input frame, platform_call and
// decoding every output entry. Records have an 8-byte key and a 100-byte
// value. It runs in the sandbox runtime, whose calls stop at their context's
// deadline, and in a runtime without that, because wazero checks for it at
// every loop iteration, and every function Go compiles to WebAssembly starts
// with a loop.
func BenchmarkUpper(b *testing.B) {
	recs := make([]abi.Record, batchSize)
	for i := range recs {
		recs[i] = abi.Record{Key: []byte("user-042"), Value: bytes.Repeat([]byte("Lorem ipsum!"), 9)[:100], Timestamp: int64(i)}
	}
	f := frame(recs)
	unstoppable := newRuntime(wazero.NewRuntimeConfig().WithMemoryLimitPages(memoryLimitPages))
	defer unstoppable.Close(context.Background())
	runtimes := []struct {
		name string
		rt   wazero.Runtime
	}{
		{"sandbox", sandbox()},
		{"no-deadline", unstoppable},
	}
	for _, r := range runtimes {
		for _, module := range []string{"upper", "upper-wat"} {
			b.Run(module+"/"+r.name, func(b *testing.B) {
				benchmarkCalls(b, instantiateIn(b, r.rt, module), f)
			})
		}
	}
}

// benchmarkCalls calls the instance's function 0 over frame f of batchSize
// records, as the host would, and reports records per second.
func benchmarkCalls(b *testing.B, in *instance, f []byte) {
	ctx := context.Background()
	mem := in.mod.Memory()
	stack := make([]uint64, 3)
	var out abi.OutputReader
	var e abi.Entry
	b.ReportAllocs()
	for b.Loop() {
		stack[0] = uint64(len(f))
		if err := in.alloc.CallWithStack(ctx, stack); err != nil {
			b.Fatal(err)
		}
		ptr := uint32(stack[0])
		mem.Write(ptr, f)
		stack[0], stack[1], stack[2] = 0, uint64(ptr), uint64(len(f))
		if err := in.call.CallWithStack(ctx, stack); err != nil {
			b.Fatal(err)
		}
		frame, _ := mem.Read(abi.Unpack(stack[0]))
		if err := out.Reset(frame, batchSize); err != nil {
			b.Fatal(err)
		}
		n := 0
		for out.Next(&e) {
			n++
		}
		if err := out.Err(); err != nil || n != batchSize {
			b.Fatalf("%d entries, %v", n, err)
		}
	}
	records := float64(b.N) * batchSize
	b.ReportMetric(records/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/records, "ns/record")
}
