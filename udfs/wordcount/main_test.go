package main

import (
	"reflect"
	"testing"

	udf "wasmstream.io/platform/sdk/go"
)

func TestSplit(t *testing.T) {
	headers := []udf.Header{{Name: []byte("source"), Value: []byte("web")}}
	tests := []struct {
		name  string
		value string
		want  []string
	}{
		{"words", "Hello, World!", []string{"hello", "world"}},
		{"punctuation only", " ...,;!? ", nil},
		{"empty", "", nil},
		{"digits", "route 66 and 4x4s, 2024-01-02", []string{"route", "66", "and", "4x4s", "2024", "01", "02"}},
		{"apostrophe", "don't", []string{"don", "t"}},
		{"unicode letters", "Straße ÜBER Ελλάδα", []string{"straße", "über", "ελλάδα"}},
		{"unicode digits", "٣٤ apples", []string{"٣٤", "apples"}},
		{"cjk", "日本語のテキスト, text", []string{"日本語のテキスト", "text"}},
		{"invalid utf-8", "ab\xffcd", []string{"ab", "cd"}},
		{"repeated", "a a A", []string{"a", "a", "a"}},
		{"tabs and newlines", "one\ttwo\nthree", []string{"one", "two", "three"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []udf.Record{{Key: []byte("line"), Value: []byte(tt.value), Timestamp: 1700000000000, Headers: headers}}
			got, err := udf.Invoke("split", in)
			if err != nil {
				t.Fatal(err)
			}
			var want []udf.Output
			for _, w := range tt.want {
				want = append(want, udf.Output{Index: 0, Record: udf.Record{
					Key: []byte(w), Value: []byte(w), Timestamp: 1700000000000, Headers: headers,
				}})
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestSplitBatch(t *testing.T) {
	in := []udf.Record{{Value: []byte("A b")}, {Value: []byte("")}, {Value: []byte("C"), Timestamp: 3}}
	got, err := udf.Invoke("split", in)
	if err != nil {
		t.Fatal(err)
	}
	want := []udf.Output{
		{Index: 0, Record: udf.Record{Key: []byte("a"), Value: []byte("a")}},
		{Index: 0, Record: udf.Record{Key: []byte("b"), Value: []byte("b")}},
		{Index: 2, Record: udf.Record{Key: []byte("c"), Value: []byte("c"), Timestamp: 3}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

func TestWord(t *testing.T) {
	got, err := udf.Invoke("word", []udf.Record{{Key: []byte("line"), Value: []byte("hello")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || string(got[0].Record.Key) != "hello" {
		t.Fatalf("got %+v, want the key hello", got)
	}
}

func TestCount(t *testing.T) {
	recs := []udf.Record{{Value: []byte("to")}, {Value: []byte("to")}, {Value: []byte("to")}}
	got, err := udf.InvokeProcessWindow("count", []byte("to"), udf.Window{Start: 1000, End: 61000}, recs)
	if err != nil {
		t.Fatal(err)
	}
	want := []udf.Output{{Index: 0, Record: udf.Record{Key: []byte("to"), Value: []byte("3"), Timestamp: 60999}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}
