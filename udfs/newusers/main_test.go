package main

import (
	"fmt"
	"slices"
	"testing"

	udf "wasmstream.io/platform/sdk/go"
)

// person and auction are the records persons and auctions emit.
func person(id int, name string) udf.Record {
	return udf.Record{Value: fmt.Appendf(nil, `{"id":%d,"name":"%s","dateTime":1}`, id, name), Timestamp: 1}
}

func auction(id, seller int) udf.Record {
	return udf.Record{Value: fmt.Appendf(nil, `{"id":%d,"reserve":5,"seller":%d,"dateTime":2}`, id, seller), Timestamp: 2}
}

// event wraps a person or auction record as the Nexmark event it came from.
func event(kind int, r udf.Record) udf.Record {
	members := [...]string{`"person":null`, `"auction":null`, `"bid":null`}
	members[kind] = fmt.Sprintf(`"%s":%s`, [...]string{"person", "auction", "bid"}[kind], r.Value)
	r.Value = fmt.Appendf(nil, `{"event_type":%d,%s,%s,%s,"dateTime":%d}`, kind, members[0], members[1], members[2], r.Timestamp)
	return r
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

func TestSplit(t *testing.T) {
	bid := udf.Record{Value: []byte(`{"auction":1,"bidder":2,"price":3,"dateTime":4}`), Timestamp: 4}
	for _, tt := range []struct {
		function string
		rec      udf.Record
		want     []string
	}{
		{"persons", event(0, person(1, "A B")), []string{`@1 {"id":1,"name":"A B","dateTime":1}`}},
		{"persons", event(1, auction(1, 1)), nil},
		{"persons", event(2, bid), nil},
		{"auctions", event(1, auction(1, 1)), []string{`@2 {"id":1,"reserve":5,"seller":1,"dateTime":2}`}},
		{"auctions", event(0, person(1, "A B")), nil},
		{"auctions", event(2, bid), nil},
	} {
		outs, err := udf.Invoke(tt.function, []udf.Record{tt.rec})
		if got := values(t, outs, err); !slices.Equal(got, tt.want) {
			t.Errorf("%s(%s) = %q, want %q", tt.function, tt.rec.Value, got, tt.want)
		}
	}
}
