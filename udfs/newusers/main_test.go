package main

import (
	"fmt"
	"testing"

	udf "wasmstream.io/platform/sdk/go"
)

func person(id int, name string) udf.Record {
	return udf.Record{Value: fmt.Appendf(nil, `{"event_type":"person","id":%d,"name":"%s","ts":1}`, id, name), Timestamp: 1}
}

func auction(id, seller int) udf.Record {
	return udf.Record{Value: fmt.Appendf(nil, `{"event_type":"auction","id":%d,"seller":%d,"reserve":5}`, id, seller), Timestamp: 2}
}

func values(t *testing.T, outs []udf.Output, err error) []string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var vs []string
	for _, o := range outs {
		if o.Err != "" {
			t.Fatalf("error: %s", o.Err)
		}
		vs = append(vs, fmt.Sprintf("%s@%d %s", o.Record.Key, o.Record.Timestamp, o.Record.Value))
	}
	return vs
}

func TestNewUsers(t *testing.T) {
	w := udf.Window{Start: 10_000, End: 20_000}
	tests := []struct {
		name     string
		function string
		cogroup  bool
		persons  []udf.Record
		auctions []udf.Record
		want     []string
	}{
		{"join: a pair per auction", "new_user", false, []udf.Record{person(7, "Ada Lo")}, []udf.Record{auction(100, 7), auction(101, 7)}, []string{
			`7@19999 {"id":7,"name":"Ada Lo","window_start":10000,"auction":100}`,
			`7@19999 {"id":7,"name":"Ada Lo","window_start":10000,"auction":101}`,
		}},
		{"co_group: counts auctions", "auction_counts", true, []udf.Record{person(7, "Ada Lo")}, []udf.Record{auction(100, 7), auction(101, 7)}, []string{
			`7@19999 {"id":7,"auctions":2}`,
		}},
		{"co_group: a person without auctions counts zero", "auction_counts", true, []udf.Record{person(7, "Ada Lo")}, nil, []string{
			`7@19999 {"id":7,"auctions":0}`,
		}},
		{"co_group: auctions without a new person emit nothing", "auction_counts", true, nil, []udf.Record{auction(100, 7)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			invoke := udf.InvokeJoin
			if tt.cogroup {
				invoke = udf.InvokeCoGroup
			}
			outs, err := invoke(tt.function, []byte("7"), w, tt.persons, tt.auctions)
			got := values(t, outs, err)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFilters(t *testing.T) {
	for _, tt := range []struct {
		filter string
		rec    udf.Record
		keep   bool
	}{
		{"persons", person(1, "A B"), true},
		{"persons", auction(1, 1), false},
		{"auctions", auction(1, 1), true},
		{"auctions", person(1, "A B"), false},
	} {
		outs, err := udf.Invoke(tt.filter, []udf.Record{tt.rec})
		if err != nil {
			t.Fatal(err)
		}
		if kept := len(outs) == 1 && outs[0].Err == ""; kept != tt.keep {
			t.Errorf("%s(%s) kept %v, want %v", tt.filter, tt.rec.Value, kept, tt.keep)
		}
	}
}
