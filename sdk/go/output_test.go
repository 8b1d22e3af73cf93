package udf

import (
	"errors"
	"reflect"
	"testing"
)

func init() {
	Process("test_side", func(ctx *Context, key []byte, recs []Record) error {
		for _, r := range recs {
			switch string(r.Value) {
			case "fail":
				ctx.OutputValue("alerts", []byte("discarded"))
				return errors.New("failed on purpose")
			case "odd":
				ctx.Output("odd", Record{Key: []byte("x"), Value: r.Value, Timestamp: r.Timestamp})
			default:
				ctx.OutputValue("alerts", r.Value)
			}
		}
		ctx.EmitValue([]byte("main"))
		return nil
	})
	OnTimer("test_side_timer", func(ctx *Context, key []byte, t Timer) error {
		ctx.OutputValue("timers", []byte("fired"))
		return nil
	})
	ProcessWindow("test_side_window", func(key []byte, w Window, recs []Record, emit func(Record)) error {
		emit(Record{Value: []byte("count")})
		SideOutput("windows", Record{Value: recs[0].Value})
		return nil
	})
	Join("test_side_join", func(key []byte, w Window, left, right Record, emit func(Record)) error {
		SideOutput("pairs", Record{Value: append(append([]byte{}, left.Value...), right.Value...)})
		return nil
	})
}

func TestContextOutput(t *testing.T) {
	h := NewHarness("test_side_timer")
	out, err := h.Process("test_side", []byte("k"), vrec("a", 5), vrec("odd", 9))
	if err != nil {
		t.Fatal(err)
	}
	want := []Output{
		{Index: 1, Record: Record{Key: []byte("k"), Value: []byte("a"), Timestamp: 9}, Side: "alerts"},
		{Index: 1, Record: Record{Key: []byte("x"), Value: []byte("odd"), Timestamp: 9}, Side: "odd"},
		{Index: 1, Record: Record{Key: []byte("k"), Value: []byte("main"), Timestamp: 9}},
	}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("got %+v\nwant %+v", out, want)
	}
	out, err = h.Process("test_side", []byte("k"), vrec("b", 1), vrec("fail", 2))
	if err != nil {
		t.Fatal(err)
	}
	if want := []Output{{Index: 0, Err: "failed on purpose"}, {Index: 1, Err: "failed on purpose"}}; !reflect.DeepEqual(out, want) {
		t.Fatalf("a failed group: got %+v, want %+v", out, want)
	}
}

func TestSideOutputOfWindowAndJoin(t *testing.T) {
	w := Window{Start: 0, End: 10}
	out, err := InvokeProcessWindow("test_side_window", []byte("k"), w, []Record{vrec("first", 3)})
	if err != nil {
		t.Fatal(err)
	}
	want := []Output{
		{Record: Record{Key: []byte("k"), Value: []byte("count"), Timestamp: 9}},
		{Record: Record{Key: []byte("k"), Value: []byte("first"), Timestamp: 9}, Side: "windows"},
	}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("window: got %+v\nwant %+v", out, want)
	}
	out, err = InvokeIntervalJoin("test_side_join", []byte("k"), vrec("l", 4), []Record{vrec("r", 7)})
	if err != nil {
		t.Fatal(err)
	}
	if want := []Output{{Record: Record{Key: []byte("k"), Value: []byte("lr"), Timestamp: 7}, Side: "pairs"}}; !reflect.DeepEqual(out, want) {
		t.Fatalf("interval join: got %+v\nwant %+v", out, want)
	}
}

func TestSideOutputOutsideACall(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("SideOutput outside a call did not panic")
		}
	}()
	SideOutput("x", Record{})
}
