package udfs

import (
	"context"
	"reflect"
	"testing"

	"wasmstream.io/platform/abi"
)

func TestKinds(t *testing.T) {
	in := instantiate(t, "kinds")
	h := abi.Header{Name: []byte("h"), Value: []byte("1")}
	rec := func(key, value string, ts int64, hs ...abi.Header) abi.Record {
		return abi.Record{Key: []byte(key), Value: []byte(value), Timestamp: ts, Headers: hs}
	}
	record := func(index uint32, flags abi.RecordFlags, key, value string, ts int64, hs ...abi.Header) abi.Entry {
		return abi.Entry{Tag: abi.TagRecord, Index: index, Flags: flags, Key: clone([]byte(key)), Value: clone([]byte(value)), Timestamp: ts, Headers: hs}
	}
	failed := func(index uint32, msg string) abi.Entry {
		return abi.Entry{Tag: abi.TagError, Index: index, Message: []byte(msg)}
	}
	tests := []struct {
		name string
		in   []abi.Record
		want []abi.Entry
		logs []string
	}{
		{"swap", []abi.Record{rec("k", "v", 1, h)}, []abi.Entry{record(0, abi.HasKey, "v", "k", 0)}, nil},
		{"delay", []abi.Record{rec("k", "v", 1, h)}, []abi.Entry{record(0, abi.HasTimestamp, "", "v", 1001)}, nil},
		{"annotate", []abi.Record{rec("k", "abc", 1, h)}, []abi.Entry{
			record(0, abi.HasHeaders, "", "abc", 0, h, abi.Header{Name: []byte("length"), Value: []byte("3")}),
		}, nil},
		{"crash", []abi.Record{rec("", "a", 1), rec("", "crash", 2), rec("", "b", 3)}, []abi.Entry{
			record(0, 0, "", "a", 0), failed(1, "panic: crash requested"), record(2, 0, "", "b", 0),
		}, nil},
		{"log", []abi.Record{rec("k", "hello", 1), rec("k", "world", 2)}, []abi.Entry{
			record(0, 0, "", "hello", 0), record(1, 0, "", "world", 0),
		}, []string{"1 hello", "1 world"}},
		{"nonempty", []abi.Record{rec("k", "", 1), rec("k", "x", 2)}, []abi.Entry{{Tag: abi.TagKeep, Index: 1}}, nil},
		{"fields", []abi.Record{rec("k", "a,b", 1, h), rec("", "c,!,d", 2), rec("", "", 3)}, []abi.Entry{
			record(0, 0, "", "a", 0), record(0, 0, "", "b", 0), failed(1, `field "!" is not allowed`), record(2, 0, "", "", 0),
		}, nil},
		{"by_value", []abi.Record{rec("old", "new", 1)}, []abi.Entry{{Tag: abi.TagKey, Index: 0, Key: []byte("new")}}, nil},
		{"parse_time", []abi.Record{rec("", "1700000000000", 1), rec("", "soon", 2)}, []abi.Entry{
			{Tag: abi.TagTimestamp, Index: 0, Timestamp: 1700000000000},
			failed(1, `strconv.ParseInt: parsing "soon": invalid syntax`),
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs []string
			got, err := in.run(context.WithValue(context.Background(), logsKey{}, &logs), tt.name, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
			if !reflect.DeepEqual(logs, tt.logs) {
				t.Fatalf("logs %q, want %q", logs, tt.logs)
			}
		})
	}
}

// TestSDKFailsWholeFrame checks the Go SDK's answers to calls that break the
// ABI: each is one error entry for all records, not a trap.
func TestSDKFailsWholeFrame(t *testing.T) {
	in := instantiate(t, "kinds")
	ctx := context.Background()
	good := frame([]abi.Record{{Value: []byte("v")}})
	res, err := in.alloc.Call(ctx, uint64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	region := uint32(res[0])
	tests := []struct {
		name  string
		index uint32
		ptr   uint32
		frame []byte
		want  string
	}{
		{"unknown function", 9, region, good, "udf: no function with index 9; the module has 9"},
		{"outside the alloc region", 0, 16, good, "udf: the input frame is not inside the region platform_alloc returned"},
		{"malformed frame", 0, region, good[:len(good)-2], "malformed frame at byte 21: want 4 bytes, have 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := in.callAt(ctx, tt.index, tt.ptr, tt.frame, 1)
			if err != nil {
				t.Fatal(err)
			}
			want := []abi.Entry{{Tag: abi.TagError, Index: abi.AllRecords, Message: []byte(tt.want)}}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		})
	}
}
