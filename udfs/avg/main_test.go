package main

import (
	"fmt"
	"testing"

	udf "wasmstream.io/platform/sdk/go"
)

func click(amount string, ts int64) udf.Record {
	return udf.Record{Value: []byte(fmt.Sprintf(`{"user":"u1","amount":%s,"ts":%d}`, amount, ts)), Timestamp: ts}
}

func TestAvg(t *testing.T) {
	tests := []struct {
		name  string
		parts [][]udf.Record
		want  string
	}{
		{"one part", [][]udf.Record{{click("1", 1), click("2", 2), click("6", 3)}},
			`{"key":"u1","window_start":0,"window_end":1000,"avg":3,"count":3}`},
		{"merged parts", [][]udf.Record{{click("1.5", 1)}, {click("2.5", 2)}, {click("-1", 3), click("1", 4)}},
			`{"key":"u1","window_start":0,"window_end":1000,"avg":1,"count":4}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outs, err := udf.InvokeAggregate("avg", []byte("u1"), udf.Window{Start: 0, End: 1000}, tt.parts...)
			if err != nil {
				t.Fatal(err)
			}
			if len(outs) != 1 || string(outs[0].Record.Value) != tt.want || outs[0].Record.Timestamp != 999 || string(outs[0].Record.Key) != "u1" {
				t.Fatalf("got %+v, want one record %s at 999", outs, tt.want)
			}
		})
	}
}

func TestAvgBadRecord(t *testing.T) {
	outs, err := udf.InvokeAggregate("avg", []byte("u1"), udf.Window{End: 10}, []udf.Record{{Value: []byte(`{"amount":"x"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Err != `"amount" is not a number` {
		t.Fatalf("got %+v, want the error of group 0", outs)
	}
}

func TestLargest(t *testing.T) {
	outs, err := udf.InvokeAggregate("largest", []byte("u1"), udf.Window{End: 10}, []udf.Record{click("3", 1), click("7", 2)}, []udf.Record{click("7", 3), click("5", 4)})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || string(outs[0].Record.Value) != string(click("7", 2).Value) {
		t.Fatalf("got %+v, want the first record with amount 7", outs)
	}
}

func TestAmount(t *testing.T) {
	for in, want := range map[string]float64{`{"amount":12}`: 12, `{"amount": -3.5,"x":1}`: -3.5, `{"a":1,"amount":1e3}`: 1000} {
		if got, err := amount([]byte(in)); err != nil || got != want {
			t.Errorf("amount(%s) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{`{}`, `{"amount":}`, `{"amount":"1"}`} {
		if _, err := amount([]byte(in)); err == nil {
			t.Errorf("amount(%s): no error", in)
		}
	}
}

func TestCount(t *testing.T) {
	outs, err := udf.InvokeAggregate("count", []byte("u1"), udf.Window{End: 10}, []udf.Record{click("3", 1), click("7", 2)}, []udf.Record{click("7", 3)})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || string(outs[0].Record.Value) != "3" {
		t.Fatalf("got %+v, want 3", outs)
	}
}
