package main

import (
	"fmt"
	"strings"
	"testing"

	udf "wasmstream.io/platform/sdk/go"
)

// kept runs an evictor over records of the values and lists the values it
// keeps, or its error.
func kept(f func(*udf.Eviction) error, values ...string) string {
	var recs []udf.Record
	for i, v := range values {
		recs = append(recs, udf.Record{Value: []byte(v), Timestamp: int64(i)})
	}
	e := udf.NewEviction(udf.Window{Start: 0, End: 100}, recs)
	if err := f(e); err != nil {
		return "error: " + err.Error()
	}
	var out []string
	for i, r := range e.Records {
		if !e.Evicted(i) {
			out = append(out, string(r.Value))
		}
	}
	return strings.Join(out, " ")
}

func TestEvictors(t *testing.T) {
	n := func(ns ...int64) []string {
		var out []string
		for _, x := range ns {
			out = append(out, fmt.Sprintf(`{"n":%d}`, x))
		}
		return out
	}
	tests := []struct {
		name string
		f    func(*udf.Eviction) error
		in   []string
		want string
	}{
		{"near_newest keeps within 10 of the last", nearNewest, n(1, 30, 21, 20, 25), `{"n":30} {"n":21} {"n":20} {"n":25}`},
		{"near_newest at the bound", nearNewest, n(-10, 10, 11, -11, 0), `{"n":-10} {"n":10} {"n":0}`},
		{"near_newest across int64", nearNewest, n(-9223372036854775808, 9223372036854775807), `{"n":9223372036854775807}`},
		{"near_newest of nothing", nearNewest, nil, ""},
		{"near_newest without n", nearNewest, []string{`{"n":1}`, `{"m":1}`}, "error: record 1: no integer n"},
		{"top2", top2, n(3, 9, 1, 9, 4), `{"n":9} {"n":9}`},
		{"top2 keeps the earlier of equal ones", top2, n(5, 7, 5, 5), `{"n":5} {"n":7}`},
		{"top2 of one", top2, n(1), `{"n":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := kept(tt.f, tt.in...); got != tt.want {
				t.Fatalf("kept %q, want %q", got, tt.want)
			}
		})
	}
}
