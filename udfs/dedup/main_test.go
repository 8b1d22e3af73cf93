package main

import (
	"reflect"
	"testing"
	"time"

	udf "wasmstream.io/platform/sdk/go"
)

func TestDedup(t *testing.T) {
	h := udf.NewHarness("")
	rec := func(v string, ts int64) udf.Record { return udf.Record{Value: []byte(v), Timestamp: ts} }
	steps := []struct {
		now  time.Duration
		key  string
		recs []udf.Record
		want []string
	}{
		{0, "a", []udf.Record{rec("a1", 1), rec("a2", 2)}, []string{"a1"}},
		{0, "b", []udf.Record{rec("b1", 3)}, []string{"b1"}},
		{time.Minute, "a", []udf.Record{rec("a3", 4)}, nil},
		{time.Hour - time.Millisecond, "a", []udf.Record{rec("a4", 5)}, nil},
		{time.Hour, "a", []udf.Record{rec("a5", 6), rec("a6", 7)}, []string{"a5"}},
		{time.Hour, "b", []udf.Record{rec("b2", 8)}, []string{"b2"}},
	}
	for i, s := range steps {
		if _, err := h.SetProcessingTime(s.now.Milliseconds()); err != nil {
			t.Fatal(err)
		}
		out, err := h.Process("dedup", []byte(s.key), s.recs...)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, o := range out {
			if o.Err != "" || string(o.Record.Key) != s.key {
				t.Fatalf("step %d: output %+v", i, o)
			}
			got = append(got, string(o.Record.Value))
		}
		if !reflect.DeepEqual(got, s.want) {
			t.Fatalf("step %d: got %q, want %q", i, got, s.want)
		}
	}
}
