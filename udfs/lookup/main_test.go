package main

import (
	"testing"

	udf "wasmstream.io/platform/sdk/go"
)

func TestJoin(t *testing.T) {
	users := map[string]string{"u1": `{"name":"Ann"}`}
	answer := func(kind udf.LookupKind, target, key string) (udf.LookupResult, error) {
		v, ok := users[key]
		return udf.LookupResult{Found: ok && target == "users", Value: []byte(v)}, nil
	}
	in := []udf.Record{
		{Key: []byte("o1"), Value: []byte(`{"user":"u1"}`), Timestamp: 5},
		{Key: []byte("o2"), Value: []byte(`{"user":"u9"}`), Timestamp: 6},
		{Key: []byte("o3"), Value: []byte(`{}`), Timestamp: 7},
	}
	got, err := udf.InvokeLookup("ask_kv", "join", in, answer)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"order":{"user":"u1"},"profile":{"name":"Ann"}}`, `{"order":{"user":"u9"},"profile":null}`, "lookup: order without user"}
	if len(got) != len(want) {
		t.Fatalf("got %d outputs, want %d: %+v", len(got), len(want), got)
	}
	for i, o := range got {
		if s := string(o.Record.Value) + o.Err; s != want[i] || o.Index != i {
			t.Errorf("output %d: %d %q, want %d %q", i, o.Index, s, i, want[i])
		}
	}
}
