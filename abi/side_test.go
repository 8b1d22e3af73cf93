package abi

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestOutputEntryRoundTrip(t *testing.T) {
	r := Record{Key: []byte("key"), Value: []byte("val"), Timestamp: -42, Headers: []Header{{Name: []byte("h"), Value: []byte("x")}}}
	cases := []struct {
		name   string
		output string
		flags  RecordFlags
	}{
		{"inherits everything", "alerts", 0},
		{"own key", "alerts", HasKey},
		{"own timestamp", "late-ish", HasTimestamp},
		{"own headers", "a", HasHeaders},
		{"all fields", strings.Repeat("x", MaxOutputName), HasKey | HasTimestamp | HasHeaders},
		{"empty name", "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			frame := AppendEntryOutput(AppendInputHeader(nil, 1), 3, c.output, c.flags, &r)
			var or OutputReader
			if err := or.Reset(frame, 4); err != nil {
				t.Fatal(err)
			}
			var e Entry
			if !or.Next(&e) {
				t.Fatalf("no entry: %v", or.Err())
			}
			if e.Tag != TagOutput || e.Index != 3 || string(e.Output) != c.output || e.Flags != c.flags || string(e.Value) != "val" {
				t.Fatalf("got %+v", e)
			}
			in := Record{Key: []byte("in"), Value: []byte("old"), Timestamp: 7}
			got := e.Apply(&in)
			wantKey, wantTS := "in", int64(7)
			if c.flags&HasKey != 0 {
				wantKey = "key"
			}
			if c.flags&HasTimestamp != 0 {
				wantTS = -42
			}
			if string(got.Key) != wantKey || got.Timestamp != wantTS || string(got.Value) != "val" || (c.flags&HasHeaders != 0) != (len(got.Headers) == 1) {
				t.Fatalf("applied: %+v", got)
			}
			if or.Next(&e) || or.Err() != nil {
				t.Fatalf("want the end of the frame, err %v", or.Err())
			}
		})
	}
}

func TestOutputEntryMalformed(t *testing.T) {
	r := Record{Value: []byte("v")}
	good := AppendEntryOutput(AppendInputHeader(nil, 1), 0, "tag", 0, &r)
	long := AppendEntryOutput(AppendInputHeader(nil, 1), 0, strings.Repeat("n", MaxOutputName+1), 0, &r)
	badFlags := bytes.Clone(good)
	badFlags[4+1+4+4+3] = 0x80
	cases := []struct {
		name  string
		frame []byte
		want  string
	}{
		{"name too long", long, "side output name of 65 bytes"},
		{"unknown flags", badFlags, "unknown record flags 0x80"},
		{"cut in the name", good[:4+1+4+4+1], "exceeds"},
		{"cut in the value", good[:len(good)-1], "exceeds"},
		{"trailing byte", append(bytes.Clone(good), 0), "trailing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var or OutputReader
			if err := or.Reset(c.frame, 1); err != nil {
				t.Fatal(err)
			}
			var e Entry
			for or.Next(&e) {
			}
			err := or.Err()
			if !errors.Is(err, ErrMalformedFrame) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
}

// FuzzOutputEntry decodes arbitrary output frames: every record and side
// output entry the reader accepts re-encodes to the bytes it was read from.
func FuzzOutputEntry(f *testing.F) {
	r := Record{Key: []byte("k"), Value: []byte("v"), Timestamp: 1, Headers: []Header{{Name: []byte("n"), Value: []byte("v")}}}
	frame := AppendInputHeader(nil, 2)
	frame = AppendEntryOutput(frame, 0, "alerts", HasKey|HasTimestamp|HasHeaders, &r)
	frame = AppendEntryRecord(frame, 1, 0, &r)
	f.Add(frame)
	f.Add(AppendEntryOutput(AppendInputHeader(nil, 1), 0, "", 0, &Record{}))
	f.Fuzz(func(t *testing.T, data []byte) {
		var or OutputReader
		if or.Reset(data, 1<<20) != nil {
			return
		}
		var e Entry
		again := AppendInputHeader(nil, or.Count())
		for or.Next(&e) {
			rec := Record{Key: e.Key, Value: e.Value, Timestamp: e.Timestamp, Headers: e.Headers}
			switch e.Tag {
			case TagOutput:
				if len(e.Output) > MaxOutputName {
					t.Fatalf("name of %d bytes accepted", len(e.Output))
				}
				again = AppendEntryOutput(again, e.Index, string(e.Output), e.Flags, &rec)
			case TagRecord:
				again = AppendEntryRecord(again, e.Index, e.Flags, &rec)
			default:
				return
			}
		}
		if or.Err() != nil {
			return
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("re-encoding differs: %x vs %x", again, data)
		}
	})
}
