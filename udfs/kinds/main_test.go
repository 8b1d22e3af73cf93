package main

import (
	"reflect"
	"testing"

	udf "wasmstream.io/platform/sdk/go"
)

func TestFunctions(t *testing.T) {
	h := udf.Header{Name: []byte("h"), Value: []byte("1")}
	length := func(n string) udf.Header { return udf.Header{Name: []byte("length"), Value: []byte(n)} }
	r := func(key, value string, ts int64, hs ...udf.Header) udf.Record {
		rec := udf.Record{Timestamp: ts, Headers: hs}
		if key != "" {
			rec.Key = []byte(key)
		}
		if value != "" {
			rec.Value = []byte(value)
		}
		return rec
	}
	tests := []struct {
		name string
		in   []udf.Record
		want []udf.Output
	}{
		{"swap", []udf.Record{r("k", "v", 1, h), r("", "v", 2)}, []udf.Output{
			{Index: 0, Record: r("v", "k", 1, h)},
			{Index: 1, Record: r("v", "", 2)},
		}},
		{"delay", []udf.Record{r("k", "v", 1, h)}, []udf.Output{{Index: 0, Record: r("k", "v", 1001, h)}}},
		{"annotate", []udf.Record{r("k", "abc", 1, h), r("", "", 2)}, []udf.Output{
			{Index: 0, Record: r("k", "abc", 1, h, length("3"))},
			{Index: 1, Record: r("", "", 2, length("0"))},
		}},
		{"crash", []udf.Record{r("", "a", 1), r("", "crash", 2), r("", "b", 3)}, []udf.Output{
			{Index: 0, Record: r("", "a", 1)},
			{Index: 1, Err: "panic: crash requested"},
			{Index: 2, Record: r("", "b", 3)},
		}},
		{"log", []udf.Record{r("k", "hello", 1, h)}, []udf.Output{{Index: 0, Record: r("k", "hello", 1, h)}}},
		{"nonempty", []udf.Record{r("k", "", 1), r("k", "x", 2, h)}, []udf.Output{{Index: 1, Record: r("k", "x", 2, h)}}},
		{"fields", []udf.Record{r("k", "a,b", 1, h), r("", "c,!,d", 2), r("", "", 3)}, []udf.Output{
			{Index: 0, Record: r("k", "a", 1, h)},
			{Index: 0, Record: r("k", "b", 1, h)},
			{Index: 1, Err: `field "!" is not allowed`},
			{Index: 2, Record: r("", "", 3)},
		}},
		{"by_value", []udf.Record{r("old", "new", 1, h), r("old", "", 2)}, []udf.Output{
			{Index: 0, Record: r("new", "new", 1, h)},
			{Index: 1, Record: r("", "", 2)},
		}},
		{"parse_time", []udf.Record{r("", "1700000000000", 1), r("", "-5", 2), r("", "soon", 3)}, []udf.Output{
			{Index: 0, Record: r("", "1700000000000", 1700000000000)},
			{Index: 1, Record: r("", "-5", -5)},
			{Index: 2, Err: `strconv.ParseInt: parsing "soon": invalid syntax`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := udf.Invoke(tt.name, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
