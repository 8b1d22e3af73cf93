package abi

import (
	"bytes"
	"errors"
	"testing"
)

func sampleRecords() []Record {
	return []Record{
		{},
		{Key: []byte("k"), Value: []byte("hello world"), Timestamp: 1700000000000},
		{Value: []byte("v"), Timestamp: -5, Headers: []Header{{Name: []byte("a"), Value: []byte("1")}, {Name: []byte("a"), Value: nil}}},
	}
}

func TestInputFrameRoundTrip(t *testing.T) {
	recs := sampleRecords()
	frame := AppendInputHeader(nil, uint32(len(recs)))
	size := 4
	for i := range recs {
		frame = AppendRecord(frame, &recs[i])
		size += recs[i].Size()
	}
	if size != len(frame) {
		t.Fatalf("Size sum %d, frame %d bytes", size, len(frame))
	}
	ir, err := NewInputReader(frame)
	if err != nil {
		t.Fatal(err)
	}
	var got Record
	i := 0
	for ir.Next(&got) {
		want := recs[i]
		if !bytes.Equal(got.Key, want.Key) || !bytes.Equal(got.Value, want.Value) || got.Timestamp != want.Timestamp || len(got.Headers) != len(want.Headers) {
			t.Fatalf("record %d: got %+v want %+v", i, got, want)
		}
		for j := range want.Headers {
			if !bytes.Equal(got.Headers[j].Name, want.Headers[j].Name) || !bytes.Equal(got.Headers[j].Value, want.Headers[j].Value) {
				t.Fatalf("record %d header %d differs", i, j)
			}
		}
		i++
	}
	if err := ir.Err(); err != nil || i != len(recs) {
		t.Fatalf("read %d of %d, err %v", i, len(recs), err)
	}
}

func TestOutputFrameRoundTrip(t *testing.T) {
	r := Record{Key: []byte("key"), Value: []byte("val"), Timestamp: 42, Headers: []Header{{Name: []byte("h"), Value: []byte("x")}}}
	frame := AppendInputHeader(nil, 6)
	frame = AppendEntryRecord(frame, 0, 0, &r)
	frame = AppendEntryRecord(frame, 1, HasKey|HasTimestamp|HasHeaders, &r)
	frame = AppendEntryError(frame, 1, "boom")
	frame = AppendEntryKeep(frame, 2)
	frame = AppendEntryKey(frame, 2, []byte("kk"))
	frame = AppendEntryTimestamp(frame, 2, -7)
	var or OutputReader
	if err := or.Reset(frame, 3); err != nil {
		t.Fatal(err)
	}
	var e Entry
	var got []Entry
	for or.Next(&e) {
		c := e
		c.Headers = append([]Header(nil), e.Headers...)
		got = append(got, c)
	}
	if err := or.Err(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tag   Tag
		index uint32
		check func(Entry) bool
	}{
		{TagRecord, 0, func(e Entry) bool { return e.Flags == 0 && string(e.Value) == "val" && e.Key == nil }},
		{TagRecord, 1, func(e Entry) bool {
			return string(e.Key) == "key" && e.Timestamp == 42 && len(e.Headers) == 1 && string(e.Headers[0].Value) == "x"
		}},
		{TagError, 1, func(e Entry) bool { return string(e.Message) == "boom" }},
		{TagKeep, 2, func(Entry) bool { return true }},
		{TagKey, 2, func(e Entry) bool { return string(e.Key) == "kk" }},
		{TagTimestamp, 2, func(e Entry) bool { return e.Timestamp == -7 }},
	}
	if len(got) != len(tests) {
		t.Fatalf("got %d entries", len(got))
	}
	for i, tt := range tests {
		if got[i].Tag != tt.tag || got[i].Index != tt.index || !tt.check(got[i]) {
			t.Errorf("entry %d: %+v", i, got[i])
		}
	}
}

func TestOutputFrameErrors(t *testing.T) {
	tests := []struct {
		name  string
		frame []byte
	}{
		{"short count", []byte{1, 0}},
		{"index out of range", AppendEntryKeep(AppendInputHeader(nil, 1), 5)},
		{"unknown tag", append(AppendInputHeader(nil, 1), 99, 0, 0, 0, 0)},
		{"length past end", append(AppendInputHeader(nil, 1), byte(TagKey), 0, 0, 0, 0, 255, 255, 0, 0)},
		{"trailing bytes", append(AppendEntryKeep(AppendInputHeader(nil, 1), 0), 1)},
		{"missing entry", AppendInputHeader(nil, 2)},
		{"bad flags", append(AppendInputHeader(nil, 1), byte(TagRecord), 0, 0, 0, 0, 0x80)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var or OutputReader
			err := or.Reset(tt.frame, 1)
			var e Entry
			for err == nil && or.Next(&e) {
			}
			if err == nil {
				err = or.Err()
			}
			if !errors.Is(err, ErrMalformedFrame) {
				t.Fatalf("err = %v, want ErrMalformedFrame", err)
			}
		})
	}
}

func TestAllRecordsError(t *testing.T) {
	frame := AppendEntryError(AppendInputHeader(nil, 1), AllRecords, "bad batch")
	var or OutputReader
	if err := or.Reset(frame, 0); err != nil {
		t.Fatal(err)
	}
	var e Entry
	if !or.Next(&e) || e.Index != AllRecords || string(e.Message) != "bad batch" {
		t.Fatalf("entry %+v err %v", e, or.Err())
	}
}

func FuzzInputReader(f *testing.F) {
	recs := sampleRecords()
	frame := AppendInputHeader(nil, uint32(len(recs)))
	for i := range recs {
		frame = AppendRecord(frame, &recs[i])
	}
	f.Add(frame)
	f.Add([]byte{})
	f.Add([]byte{255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, data []byte) {
		ir, err := NewInputReader(data)
		if err != nil {
			return
		}
		var rec Record
		var again []byte
		n := uint32(0)
		for ir.Next(&rec) {
			again = AppendRecord(again, &rec)
			n++
		}
		if ir.Err() != nil || n != ir.Count() {
			return
		}
		// A frame that decodes cleanly re-encodes to the same bytes.
		if re := append(AppendInputHeader(nil, n), again...); !bytes.Equal(re, data) {
			t.Fatalf("re-encoding differs: %x vs %x", re, data)
		}
	})
}

func FuzzOutputReader(f *testing.F) {
	r := Record{Key: []byte("k"), Value: []byte("v"), Timestamp: 1, Headers: []Header{{Name: []byte("n"), Value: []byte("v")}}}
	frame := AppendInputHeader(nil, 3)
	frame = AppendEntryRecord(frame, 0, HasKey|HasTimestamp|HasHeaders, &r)
	frame = AppendEntryError(frame, 1, "x")
	frame = AppendEntryTimestamp(frame, 2, 3)
	f.Add(frame, uint32(3))
	f.Add([]byte{}, uint32(0))
	f.Fuzz(func(t *testing.T, data []byte, inputs uint32) {
		var or OutputReader
		if or.Reset(data, inputs) != nil {
			return
		}
		var e Entry
		for or.Next(&e) {
			if e.Index >= inputs && e.Index != AllRecords {
				t.Fatalf("index %d accepted for %d inputs", e.Index, inputs)
			}
		}
		_ = or.Err()
	})
}
