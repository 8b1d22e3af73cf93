package abi

import (
	"errors"
	"math"
	"testing"
)

// TestTriggerEntries: trigger and timer entries decode to what was
// appended, and malformed ones are refused at their byte.
func TestTriggerEntries(t *testing.T) {
	frame := AppendInputHeader(nil, 4)
	frame = AppendEntryTrigger(frame, 0, TriggerFireAndPurge)
	frame = AppendEntryTimer(frame, 1, false, EventTime, math.MaxInt64)
	frame = AppendEntryTimer(frame, 1, true, ProcessingTime, -5)
	frame = AppendEntryAccumulator(frame, 0, []byte("st"))
	want := []Entry{
		{Tag: TagTrigger, Index: 0, Result: TriggerFireAndPurge},
		{Tag: TagTimer, Index: 1, Timestamp: math.MaxInt64, Domain: EventTime},
		{Tag: TagTimer, Index: 1, Timestamp: -5, Domain: ProcessingTime, Delete: true},
		{Tag: TagAccumulator, Index: 0, Value: []byte("st")},
	}
	var or OutputReader
	if err := or.Reset(frame, 2); err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		var e Entry
		if !or.Next(&e) {
			t.Fatalf("entry %d: %v", i, or.Err())
		}
		if e.Tag != w.Tag || e.Index != w.Index || e.Result != w.Result || e.Timestamp != w.Timestamp ||
			e.Domain != w.Domain || e.Delete != w.Delete || string(e.Value) != string(w.Value) {
			t.Fatalf("entry %d: got %+v, want %+v", i, e, w)
		}
	}
	if err := or.Err(); err != nil {
		t.Fatal(err)
	}
	if !TriggerFireAndPurge.Fires() || !TriggerFireAndPurge.Purges() || TriggerPurge.Fires() || TriggerFire.Purges() || TriggerContinue.Fires() {
		t.Fatal("result bits")
	}

	bad := []struct {
		name  string
		frame []byte
	}{
		{"result 4", append(AppendInputHeader(nil, 1), byte(TagTrigger), 0, 0, 0, 0, 4)},
		{"timer action 2", append(AppendInputHeader(nil, 1), byte(TagTimer), 0, 0, 0, 0, 2, 0, 1, 2, 3, 4, 5, 6, 7, 8)},
		{"timer domain 2", append(AppendInputHeader(nil, 1), byte(TagTimer), 0, 0, 0, 0, 0, 2, 1, 2, 3, 4, 5, 6, 7, 8)},
		{"short timer", append(AppendInputHeader(nil, 1), byte(TagTimer), 0, 0, 0, 0, 0, 0, 1)},
		{"group out of range", AppendEntryTrigger(AppendInputHeader(nil, 1), 2, TriggerFire)},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			var or OutputReader
			if err := or.Reset(b.frame, 2); err != nil {
				t.Fatal(err)
			}
			var e Entry
			if or.Next(&e) {
				t.Fatalf("decoded %+v", e)
			}
			if err := or.Err(); !errors.Is(err, ErrMalformedFrame) {
				t.Fatalf("error %v, want a malformed frame", err)
			}
		})
	}
}

// FuzzTriggerEntries: any bytes decode to entries or a malformed frame
// error, and every trigger or timer entry decoded re-encodes to the same
// bytes.
func FuzzTriggerEntries(f *testing.F) {
	f.Add(AppendEntryTimer(AppendEntryTrigger(AppendInputHeader(nil, 2), 0, TriggerFire), 0, true, ProcessingTime, 9))
	f.Add(append(AppendInputHeader(nil, 1), byte(TagTimer), 0, 0, 0, 0, 3, 3))
	f.Fuzz(func(t *testing.T, frame []byte) {
		var or OutputReader
		if or.Reset(frame, 4) != nil {
			return
		}
		var e Entry
		for or.Next(&e) {
			var again []byte
			switch e.Tag {
			case TagTrigger:
				again = AppendEntryTrigger(nil, e.Index, e.Result)
			case TagTimer:
				again = AppendEntryTimer(nil, e.Index, e.Delete, e.Domain, e.Timestamp)
			default:
				continue
			}
			if e.Tag == TagTrigger && e.Result > TriggerFireAndPurge || e.Domain > ProcessingTime {
				t.Fatalf("decoded a bad entry %+v", e)
			}
			if len(again) == 0 {
				t.Fatal("nothing encoded")
			}
		}
		if err := or.Err(); err != nil && !errors.Is(err, ErrMalformedFrame) {
			t.Fatalf("error %v is not a malformed frame", err)
		}
	})
}
