package host

import (
	"context"
	"reflect"
	"testing"

	"wasmstream.io/platform/abi"
)

// Function indexes of testdata/udf.wat.
const (
	fnUpper = iota
	fnSpin
	fnBomb
	fnLog
	fnBadOut
	fnExit
	fnPrint
)

func TestCallUpper(t *testing.T) {
	h, _ := newHost(t, "")
	m := compileFixture(t, h, "udf")
	wantFns := []abi.Function{
		{Name: "upper", Kind: abi.KindMap}, {Name: "spin", Kind: abi.KindMap}, {Name: "bomb", Kind: abi.KindMap},
		{Name: "log", Kind: abi.KindMap}, {Name: "badout", Kind: abi.KindMap}, {Name: "exit", Kind: abi.KindMap},
		{Name: "print", Kind: abi.KindMap},
	}
	if !reflect.DeepEqual(m.Description, abi.Description{ABI: 1, Functions: wantFns}) {
		t.Fatalf("description %+v", m.Description)
	}
	p := newPool(t, m, InstanceConfig{})
	records := []abi.Record{
		{Key: []byte("k1"), Value: []byte("hello"), Timestamp: 7},
		{Value: []byte("MiXeD 123 {z}"), Headers: []abi.Header{{Name: []byte("h"), Value: []byte("v")}}},
		{Key: []byte("k3"), Value: []byte("")},
	}
	for range 3 {
		out, err := p.Call(context.Background(), fnUpper, inputFrame(records...))
		if err != nil {
			t.Fatal(err)
		}
		got := decodeOutput(t, out, len(records))
		want := []abi.Entry{
			{Tag: abi.TagRecord, Index: 0, Value: []byte("HELLO")},
			{Tag: abi.TagRecord, Index: 1, Value: []byte("MIXED 123 {Z}")},
			{Tag: abi.TagRecord, Index: 2, Value: []byte{}},
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("entries %+v, want %+v", got, want)
		}
	}
	if n := p.Instantiations(); n != 1 {
		t.Fatalf("instantiations %d, want 1", n)
	}
	if n := p.MemoryBytes(); n != 2*pageSize {
		t.Fatalf("memory %d, want %d", n, 2*pageSize)
	}
}

// TestCallAllocatesNothing checks that a steady-state Call, deadline
// included, allocates nothing: no context, timer or goroutine per call.
func TestCallAllocatesNothing(t *testing.T) {
	h, _ := newHost(t, "")
	m := compileFixture(t, h, "udf")
	p := newPool(t, m, InstanceConfig{})
	frame := inputFrame(values("a", "b", "c")...)
	ctx := context.Background()
	if _, err := p.Call(ctx, fnUpper, frame); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := p.Call(ctx, fnUpper, frame); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Call allocates %v times, want 0", allocs)
	}
}
