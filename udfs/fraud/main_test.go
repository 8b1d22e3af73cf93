package main

import (
	"fmt"
	"reflect"
	"testing"

	udf "wasmstream.io/platform/sdk/go"
)

func txn(amount string, ts int64) udf.Record {
	return udf.Record{Value: []byte(fmt.Sprintf(`{"account": "x", "amount": %s}`, amount)), Timestamp: ts}
}

func TestDetect(t *testing.T) {
	type step struct {
		wm    int64 // advance the watermark first (0: no)
		acct  string
		txns  []udf.Record
		want  []string
		fired int
	}
	steps := []step{
		{acct: "a", txns: []udf.Record{txn("0.50", 1000), txn("600", 2000)}, want: []string{`{"account":"a","ts":2000,"amount":600.00}`}},
		{acct: "a", txns: []udf.Record{txn("700", 3000)}},
		{acct: "b", txns: []udf.Record{txn("0.99", 10_000)}},
		{acct: "b", txns: []udf.Record{txn("501", 70_000)}, want: []string{`{"account":"b","ts":70000,"amount":501.00}`}},
		{acct: "c", txns: []udf.Record{txn("0.10", 100_000), txn("20", 100_500), txn("900", 101_000)}},
		{acct: "d", txns: []udf.Record{txn("0.10", 200_000)}},
		{wm: 260_000, fired: 1},
		{acct: "d", txns: []udf.Record{txn("900", 260_001)}},
		{acct: "e", txns: []udf.Record{txn("0.10", 300_000), txn("0.20", 330_000), txn("800", 380_000)}, want: []string{`{"account":"e","ts":380000,"amount":800.00}`}},
		{acct: "f", txns: []udf.Record{txn("0.10", 400_000), txn("800", 460_001)}},
	}
	h := udf.NewHarness("expire")
	for i, s := range steps {
		var out []udf.Output
		var err error
		if s.wm != 0 {
			out, err = h.AdvanceWatermark(s.wm)
			if len(out) != 0 {
				t.Fatalf("step %d: the timer emitted %+v", i, out)
			}
		} else {
			out, err = h.Process("detect", []byte(s.acct), s.txns...)
		}
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, o := range out {
			if o.Err != "" {
				t.Fatalf("step %d: %s", i, o.Err)
			}
			got = append(got, string(o.Record.Value))
		}
		if !reflect.DeepEqual(got, s.want) {
			t.Fatalf("step %d: got %q, want %q", i, got, s.want)
		}
	}
	if got := len(h.Timers()); got != 0 {
		t.Fatalf("%d timers left: %+v", got, h.Timers())
	}
}

func TestDetectRejectsRecordsWithoutAmount(t *testing.T) {
	h := udf.NewHarness("expire")
	out, err := h.Process("detect", []byte("a"), udf.Record{Value: []byte(`{"amount": "lots"}`)})
	if err != nil || len(out) != 1 || out[0].Err != `no number field "amount"` {
		t.Fatalf("%+v %v", out, err)
	}
}
