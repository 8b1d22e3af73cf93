package main

import (
	"reflect"
	"testing"

	udf "wasmstream.io/platform/sdk/go"
)

func TestTriage(t *testing.T) {
	h := udf.NewHarness("")
	rec := func(v string, ts int64) udf.Record { return udf.Record{Value: []byte(v), Timestamp: ts} }
	out, err := h.Process("triage", []byte("u1"),
		rec(`{"amount":12}`, 1), rec(`{"amount":900}`, 2), rec(`{"amount":"x"}`, 3), rec(`{"amount":1234567890}`, 4), rec(`{}`, 5))
	if err != nil {
		t.Fatal(err)
	}
	type line struct {
		side, value string
		ts          int64
	}
	var got []line
	for _, o := range out {
		if o.Err != "" {
			t.Fatalf("error %q", o.Err)
		}
		got = append(got, line{o.Side, string(o.Record.Value), o.Record.Timestamp})
	}
	want := []line{
		{"", `{"amount":12}`, 1},
		{"large", `{"amount":900}`, 2},
		{"invalid", `{"amount":"x"}`, 3},
		{"large", `{"amount":1234567890}`, 4},
		{"invalid", `{}`, 5},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestTallyAndMatch(t *testing.T) {
	w := udf.Window{Start: 0, End: 10}
	out, err := udf.InvokeProcessWindow("tally", []byte("u"), w, []udf.Record{{Value: []byte(`{"amount":950}`), Timestamp: 1}, {Value: []byte(`{"amount":5}`), Timestamp: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].Side != "large" || string(out[0].Record.Value) != `{"amount":950}` || out[0].Record.Timestamp != 9 ||
		out[1].Side != "" || string(out[1].Record.Value) != "2" {
		t.Fatalf("tally: %+v", out)
	}
	out, err = udf.InvokeJoin("match", []byte("u"), w, []udf.Record{{Value: []byte(`{"amount":990}`), Timestamp: 1}, {Value: []byte(`{"amount":3}`), Timestamp: 2}}, []udf.Record{{Value: []byte("p"), Timestamp: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].Side != "large" || string(out[0].Record.Value) != `{"amount":990}|p` || out[1].Side != "" || string(out[1].Record.Value) != `{"amount":3}|p` {
		t.Fatalf("match: %+v", out)
	}
}
