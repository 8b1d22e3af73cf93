package main

import (
	"reflect"
	"testing"

	udf "wasmstream.io/platform/sdk/go"
)

// Firings of a window count up until the window is purged; each window and
// each key counts on its own.
func TestCount(t *testing.T) {
	h := udf.NewHarness("")
	w1, w2 := udf.Window{Start: 0, End: 10}, udf.Window{Start: 10, End: 20}
	r := func(ts int64) udf.Record { return udf.Record{Value: []byte("x"), Timestamp: ts} }
	steps := []struct {
		key   string
		w     udf.Window
		recs  []udf.Record
		purge bool
		want  string
	}{
		{key: "a", w: w1, recs: []udf.Record{r(1), r(2)}, want: "a [0,10) firing 1: 2 records"},
		{key: "b", w: w1, recs: []udf.Record{r(3)}, want: "b [0,10) firing 1: 1 records"},
		{key: "a", w: w1, recs: []udf.Record{r(1), r(2), r(5)}, want: "a [0,10) firing 2: 3 records"},
		{key: "a", w: w2, recs: []udf.Record{r(12)}, want: "a [10,20) firing 1: 1 records"},
		{key: "a", w: w1, recs: []udf.Record{r(1), r(2), r(5), r(6)}, want: "a [0,10) firing 3: 4 records"},
		{key: "a", w: w1, recs: []udf.Record{r(7)}, purge: true, want: "a [0,10) firing 1: 1 records"},
	}
	for i, s := range steps {
		if s.purge {
			h.PurgeWindow([]byte(s.key), s.w)
		}
		out, err := h.ProcessWindow("count", []byte(s.key), s.w, s.recs...)
		if err != nil {
			t.Fatal(err)
		}
		want := []udf.Output{{Record: udf.Record{Key: []byte(s.key), Value: []byte(s.want), Timestamp: s.w.End - 1}}}
		if !reflect.DeepEqual(out, want) {
			t.Fatalf("step %d: got %+v, want %+v", i, out, want)
		}
	}
}

// The state holds the count as 8 bytes, little-endian.
func TestCountState(t *testing.T) {
	h := udf.NewHarness("")
	w := udf.Window{Start: 0, End: 10}
	if _, err := h.ProcessWindow("count", []byte("a"), w); err != nil {
		t.Fatal(err)
	}
	v, ok := h.WindowValue("fired", []byte("a"), w)
	if !ok || len(v) != 8 || v[0] != 1 {
		t.Fatalf("state fired %v %v, want 1 as 8 bytes", v, ok)
	}
}
