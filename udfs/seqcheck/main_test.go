package main

import (
	"testing"

	udf "wasmstream.io/platform/sdk/go"
)

func TestTrack(t *testing.T) {
	h := udf.NewHarness("")
	rec := func(v string) udf.Record { return udf.Record{Value: []byte(v)} }
	out, err := h.Process("track", []byte("a"), rec(`{"k":"a","s":1}`), rec(`{"k":"a","s":2}`))
	if err != nil {
		t.Fatal(err)
	}
	out2, err := h.Process("track", []byte("a"), rec(`{"k":"a","s":3}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range append(out, out2...) {
		got = append(got, string(o.Record.Value))
	}
	want := []string{`{"k":"a","s":1,"p":0}`, `{"k":"a","s":2,"p":1}`, `{"k":"a","s":3,"p":2}`}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("output %d: %s, want %s", i, got[i], want[i])
		}
	}
}
