package main

import (
	"fmt"
	"testing"

	udf "wasmstream.io/platform/sdk/go"
)

func click(page string, amount int, ts int64) udf.Record {
	return udf.Record{Value: []byte(fmt.Sprintf(`{"user":"u1","page":%q,"amount":%d,"ts":%d}`, page, amount, ts)), Timestamp: ts}
}

func TestSummary(t *testing.T) {
	recs := []udf.Record{click("/b", 2, 20), click("/a", 1, 10), click("/b", 3, 30), click("/c", 0, 25)}
	outs, err := udf.InvokeProcessWindow("summary", []byte("u1"), udf.Window{Start: 10, End: 30030}, recs)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"key":"u1","window_start":10,"window_end":30030,"events":4,"amount":6,"pages":["/a","/b","/c"]}`
	if len(outs) != 1 || string(outs[0].Record.Value) != want || outs[0].Record.Timestamp != 30029 || string(outs[0].Record.Key) != "u1" {
		t.Fatalf("got %+v, want one record %s at 30029", outs, want)
	}
}

func TestGap(t *testing.T) {
	outs, err := udf.InvokeSessionGap("gap", []udf.Record{click("/a", 1, 1), click("/checkout/pay", 1, 2)})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 2 || outs[0].Record.Timestamp != 30_000 || outs[1].Record.Timestamp != 300_000 {
		t.Fatalf("gaps %+v, want 30000 and 300000", outs)
	}
}

func TestHeartbeat(t *testing.T) {
	recs := []udf.Record{click("/a", 1, 5), {Value: []byte(`{"heartbeat":true}`), Timestamp: 9}, {Value: []byte(`{"heartbeat":false}`), Timestamp: 12}}
	outs, err := udf.InvokeWatermark("heartbeat", recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Index != 1 || outs[0].Record.Timestamp != 9 {
		t.Fatalf("watermarks %+v, want 9 after record 1", outs)
	}
}

func TestField(t *testing.T) {
	tests := []struct{ in, name, want string }{
		{`{"page":"/x","amount":3}`, "page", "/x"},
		{`{"page":"/x","amount":3}`, "amount", "3"},
		{`{"a" : true}`, "a", "true"},
	}
	for _, tt := range tests {
		if got, ok := field([]byte(tt.in), tt.name); !ok || string(got) != tt.want {
			t.Errorf("field(%s, %s) = %q, %v; want %q", tt.in, tt.name, got, ok, tt.want)
		}
	}
	if _, ok := field([]byte(`{"b":1}`), "a"); ok {
		t.Error("field found a missing field")
	}
}
