package udf

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"wasmstream.io/platform/abi"
)

func init() {
	Aggregate("test_agg_faulty", AggregateFuncs{
		Create: func() []byte { return []byte{0} },
		Add: func(acc []byte, r Record) ([]byte, error) {
			switch string(r.Value) {
			case "panic":
				panic("boom")
			case "error":
				return nil, errors.New("bad record")
			}
			acc[0]++
			return acc, nil
		},
		Merge:  func(a, b []byte) ([]byte, error) { return []byte{a[0] + b[0]}, nil },
		Result: func(key []byte, w Window, acc []byte) ([]byte, error) { return []byte{'0' + acc[0]}, nil },
	})
	ProcessWindow("test_window_faulty", func(key []byte, w Window, recs []Record, emit func(Record)) error {
		emit(Record{Value: []byte("first")})
		if string(recs[0].Value) == "panic" {
			panic("boom")
		}
		emit(Record{Key: []byte("other"), Value: []byte("second"), Timestamp: 5})
		return nil
	})
	SessionGap("test_gap_faulty", func(r Record) (int64, error) {
		switch string(r.Value) {
		case "panic":
			panic("boom")
		case "zero":
			return 0, nil
		}
		return 10, nil
	})
}

// addFrame encodes an add frame of one group per part.
func addFrame(parts ...[]string) []byte {
	frame := abi.AppendFrameHead(nil, abi.FrameHead{Op: abi.OpAdd, Groups: uint32(len(parts))})
	for _, p := range parts {
		frame = abi.AppendGroupHead(frame, &abi.GroupHead{Key: []byte("k")}, uint32(len(p)))
		for _, v := range p {
			frame = abi.AppendRecord(frame, &abi.Record{Value: []byte(v)})
		}
	}
	return frame
}

// windowEntries decodes an output frame into "tag index payload" strings.
func windowEntries(t *testing.T, frame []byte, inputs uint32) []string {
	t.Helper()
	var r abi.OutputReader
	if err := r.Reset(frame, inputs); err != nil {
		t.Fatal(err)
	}
	var out []string
	var e abi.Entry
	for r.Next(&e) {
		payload := string(e.Value) + string(e.Message)
		out = append(out, string(rune('0'+e.Tag))+" "+string(rune('0'+e.Index))+" "+payload)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestWindowCallGroupFailures(t *testing.T) {
	c := newCaller(&functions)
	agg := uint32(functions.lookup("test_agg_faulty"))
	got := windowEntries(t, c.call(agg, addFrame([]string{"a", "b"}, []string{"a", "panic", "b"}, []string{"error"}, []string{"c"})), 4)
	want := []string{"6 0 \x02", "2 1 panic: boom", "2 2 bad record", "6 3 \x01"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("add: %q, want %q", got, want)
	}
	// An unknown op fails every group.
	frame := abi.AppendFrameHead(nil, abi.FrameHead{Op: 9, Groups: 1})
	frame = abi.AppendGroupHead(frame, &abi.GroupHead{Key: []byte("k")}, 0)
	if got := windowEntries(t, c.call(agg, frame), 1); !reflect.DeepEqual(got, []string{"2 0 udf: aggregate called with op 9"}) {
		t.Fatalf("bad op: %q", got)
	}
	// A truncated frame fails as a whole.
	if got := windowEntries(t, c.call(agg, frame[:len(frame)-2]), 1); len(got) != 1 || got[0][:2] != "2 " {
		t.Fatalf("truncated frame: %q", got)
	}
}

func TestProcessWindowEmitsAndRollsBack(t *testing.T) {
	outs, err := InvokeProcessWindow("test_window_faulty", []byte("k"), Window{Start: 0, End: 10}, []Record{{Value: []byte("x")}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Output{
		{Record: Record{Key: []byte("k"), Value: []byte("first"), Timestamp: 9}},
		{Record: Record{Key: []byte("other"), Value: []byte("second"), Timestamp: 5}},
	}
	if !reflect.DeepEqual(outs, want) {
		t.Fatalf("got %+v, want %+v", outs, want)
	}
	outs, err = InvokeProcessWindow("test_window_faulty", []byte("k"), Window{Start: 0, End: 10}, []Record{{Value: []byte("panic")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Err != "panic: boom" {
		t.Fatalf("a panic keeps what was emitted: %+v", outs)
	}
}

func TestSessionGapFailures(t *testing.T) {
	recs := []Record{{Key: []byte("a"), Value: []byte("x")}, {Key: []byte("a"), Value: []byte("panic")}, {Key: []byte("b"), Value: []byte("zero")}, {Key: []byte("b"), Value: []byte("y")}}
	outs, err := InvokeSessionGap("test_gap_faulty", recs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range outs {
		if o.Err != "" {
			got = append(got, o.Err)
		} else {
			got = append(got, string(rune('0'+o.Record.Timestamp/10)))
		}
	}
	if want := []string{"1", "panic: boom", "udf: session gap 0 is not positive", "1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// countCodec stores an int64 in 8 bytes without reflection.
type countCodec struct{}

func (countCodec) Append(dst []byte, n *int64) []byte {
	return binary.LittleEndian.AppendUint64(dst, uint64(*n))
}

func (countCodec) Decode(b []byte, n *int64) error {
	*n = int64(binary.LittleEndian.Uint64(b))
	return nil
}

func TestWindowCallAllocationFree(t *testing.T) {
	AggregateOf("test_count", countCodec{}, TypedAggregate[int64]{
		Create: func(n *int64) { *n = 0 },
		Add:    func(n *int64, _ Record) error { *n++; return nil },
		Merge:  func(n, o *int64) error { *n += *o; return nil },
		Result: func(_ []byte, _ Window, _ *int64) ([]byte, error) { return nil, nil },
	})
	c := newCaller(&functions)
	agg := uint32(functions.lookup("test_count"))
	frame := addFrame([]string{"1", "2"}, []string{"3"})
	c.call(agg, frame)
	if allocs := testing.AllocsPerRun(50, func() { c.call(agg, frame) }); allocs > 0 {
		t.Fatalf("%v allocations per call", allocs)
	}
}
