package udfs

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"testing"

	"wasmstream.io/platform/abi"
)

// triggerFrame is a grouped frame of a trigger's op over groups, each
// with the records it lists (one for an element, none otherwise).
func triggerFrame(op abi.Op, wm, now int64, groups []abi.GroupHead, recs []abi.Record) []byte {
	f := abi.AppendFrameHead(nil, abi.FrameHead{Op: op, Watermark: wm, ProcessingTime: now, Groups: uint32(len(groups))})
	for i := range groups {
		if op == abi.OpTriggerElement {
			f = abi.AppendGroupHead(f, &groups[i], 1)
			f = abi.AppendRecord(f, &recs[i])
		} else {
			f = abi.AppendGroupHead(f, &groups[i], 0)
		}
	}
	return f
}

// pairState is the state of udfs/trigger's pairs: a count and a timer.
func pairState(count uint64, timer int64) []byte {
	return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, count), uint64(timer))
}

// TestTriggerAcrossLanguages runs the triggers of udfs/trigger (Go) and
// udfs/trigger-rust over the same frames of every op and checks that their
// output entries are exactly the same, and the Go module's what the
// triggers mean.
func TestTriggerAcrossLanguages(t *testing.T) {
	win := func(key string, start, end int64, state []byte) abi.GroupHead {
		g := abi.GroupHead{Flags: abi.GroupWindow, Key: []byte(key), WindowStart: start, WindowEnd: end}
		if state != nil {
			g.Flags |= abi.GroupAcc
			g.Acc = state
		}
		return g
	}
	timer := func(g abi.GroupHead, d abi.TimeDomain, ts int64) abi.GroupHead {
		g.Flags |= abi.GroupTimer
		g.TimerDomain, g.TimerTime = d, ts
		return g
	}
	merge := func(g abi.GroupHead, other []byte) abi.GroupHead {
		if other != nil {
			g.Flags |= abi.GroupAcc2
			g.Acc2 = other
		}
		return g
	}
	rec := func(v string) abi.Record { return abi.Record{Key: []byte("k"), Value: []byte(v), Timestamp: 5} }
	fire := func(i uint32, r abi.TriggerResult) abi.Entry {
		return abi.Entry{Tag: abi.TagTrigger, Index: i, Result: r}
	}
	tm := func(i uint32, del bool, d abi.TimeDomain, ts int64) abi.Entry {
		return abi.Entry{Tag: abi.TagTimer, Index: i, Delete: del, Domain: d, Timestamp: ts}
	}
	st := func(i uint32, v []byte) abi.Entry { return abi.Entry{Tag: abi.TagAccumulator, Index: i, Value: v} }
	tests := []struct {
		name, fn string
		frame    []byte
		groups   uint32
		want     []abi.Entry
	}{
		{"early elements", "early", triggerFrame(abi.OpTriggerElement, 3, 0,
			[]abi.GroupHead{win("a", 0, 10, nil), win("b", 0, 10, nil), win("c", 0, 4, nil), win("d", 0, 10, nil), win("e", math.MinInt64, math.MaxInt64, nil)},
			[]abi.Record{rec(`{"urgent":true}`), rec(`{"urgent":false}`), rec(`x`), rec(`{"urgent": true, "n": [1]}`), rec(`{"n":1}`)}), 5,
			[]abi.Entry{tm(0, false, abi.EventTime, 9), fire(0, abi.TriggerFire), tm(1, false, abi.EventTime, 9), fire(2, abi.TriggerFire),
				tm(3, false, abi.EventTime, 9), fire(3, abi.TriggerFire), tm(4, false, abi.EventTime, math.MaxInt64-1)}},
		{"early timers", "early", triggerFrame(abi.OpTriggerTimer, 9, 0,
			[]abi.GroupHead{timer(win("a", 0, 10, nil), abi.EventTime, 9), timer(win("a", 0, 10, nil), abi.EventTime, 14), timer(win("a", 0, 10, nil), abi.ProcessingTime, 9)}, nil), 3,
			[]abi.Entry{fire(0, abi.TriggerFire)}},
		{"early merge and clear", "early", triggerFrame(abi.OpTriggerMerge, 0, 0, []abi.GroupHead{win("a", 0, 30, nil)}, nil), 1,
			[]abi.Entry{tm(0, false, abi.EventTime, 29)}},
		{"early clear", "early", triggerFrame(abi.OpTriggerClear, 0, 0, []abi.GroupHead{win("a", 0, 30, nil)}, nil), 1,
			[]abi.Entry{tm(0, true, abi.EventTime, 29)}},
		{"pairs elements", "pairs", triggerFrame(abi.OpTriggerElement, 0, 100,
			[]abi.GroupHead{win("a", 0, 10, nil), win("b", 0, 10, pairState(1, 105)), win("c", 0, 10, pairState(1, 0)), win("d", 0, 10, []byte("bad"))},
			[]abi.Record{rec("x"), rec("y"), rec("z"), rec("w")}), 4,
			[]abi.Entry{tm(0, false, abi.ProcessingTime, 110), st(0, pairState(1, 110)), tm(1, true, abi.ProcessingTime, 105), st(1, nil), fire(1, abi.TriggerFireAndPurge),
				st(2, nil), fire(2, abi.TriggerFireAndPurge), {Tag: abi.TagError, Index: 3, Message: []byte("pairs state of 3 bytes, want 16")}}},
		{"pairs timers", "pairs", triggerFrame(abi.OpTriggerTimer, 0, 110,
			[]abi.GroupHead{timer(win("a", 0, 10, pairState(1, 110)), abi.ProcessingTime, 110), timer(win("a", 0, 10, pairState(1, 110)), abi.EventTime, 9)}, nil), 2,
			[]abi.Entry{st(0, pairState(1, 0)), fire(0, abi.TriggerFire)}},
		{"pairs merges", "pairs", triggerFrame(abi.OpTriggerMerge, 0, 0,
			[]abi.GroupHead{merge(win("a", 0, 30, pairState(1, 50)), pairState(1, 40)), merge(win("a", 0, 30, nil), nil), merge(win("a", 0, 30, nil), pairState(1, 0))}, nil), 3,
			[]abi.Entry{tm(0, false, abi.ProcessingTime, 40), st(0, pairState(2, 40)), st(2, pairState(1, 0))}},
		{"pairs clear", "pairs", triggerFrame(abi.OpTriggerClear, 0, 0,
			[]abi.GroupHead{win("a", 0, 30, pairState(1, 50)), win("b", 0, 30, nil)}, nil), 2,
			[]abi.Entry{tm(0, true, abi.ProcessingTime, 50)}},
	}
	ctx := context.Background()
	goMod := instantiate(t, "trigger")
	for _, tt := range tests {
		got, err := goMod.callFrame(ctx, tt.fn, tt.frame, tt.groups)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Go %s: got  %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
	rust := instantiate(t, "trigger-rust")
	if !reflect.DeepEqual(rust.desc, goMod.desc) {
		t.Fatalf("description %+v, want %+v", rust.desc, goMod.desc)
	}
	for _, tt := range tests {
		want, err := goMod.callRaw(ctx, tt.fn, tt.frame)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rust.callRaw(ctx, tt.fn, tt.frame)
		if err != nil {
			t.Fatalf("rust %s: %v", tt.name, err)
		}
		if string(got) != string(want) {
			t.Errorf("rust %s: output frame\n%x\nwant\n%x", tt.name, got, want)
		}
	}
}

// callRaw calls the named function over a raw frame and returns a copy of
// its output frame.
func (in *instance) callRaw(ctx context.Context, fn string, f []byte) ([]byte, error) {
	res, err := in.alloc.Call(ctx, uint64(len(f)))
	if err != nil {
		return nil, err
	}
	ptr := uint32(res[0])
	if !in.mod.Memory().Write(ptr, f) {
		return nil, fmt.Errorf("frame of %d bytes at %d is outside memory", len(f), ptr)
	}
	out, err := in.call.Call(ctx, uint64(in.desc.Lookup(fn)), uint64(ptr), uint64(len(f)))
	if err != nil {
		return nil, err
	}
	b, ok := in.mod.Memory().Read(abi.Unpack(out[0]))
	if !ok {
		return nil, fmt.Errorf("output frame outside memory")
	}
	return bytes.Clone(b), nil
}
