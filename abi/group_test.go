package abi

import (
	"bytes"
	"errors"
	"testing"
)

func TestGroupedFrameRoundTrip(t *testing.T) {
	heads := []GroupHead{
		{Key: []byte("k1"), Flags: GroupWindow | GroupAcc, WindowStart: 0, WindowEnd: 60000, Acc: []byte("acc")},
		{Key: []byte("k2"), Flags: GroupAcc | GroupAcc2, Acc: []byte{}, Acc2: []byte("b")},
		{Key: nil, Flags: GroupTimer, TimerTime: 42, TimerDomain: ProcessingTime},
		{Key: []byte("j"), Flags: GroupTwoSided | GroupWindow, WindowStart: -5, WindowEnd: 5},
	}
	recs := [][]Record{
		{{Value: []byte("a"), Timestamp: 1}, {Value: []byte("b"), Timestamp: 2}},
		nil,
		{{Key: []byte("x"), Value: []byte("c"), Headers: []Header{{Name: []byte("h"), Value: []byte("v")}}}},
		{{Value: []byte("left")}},
	}
	right := []Record{{Value: []byte("r1")}, {Value: []byte("r2")}}
	frame := AppendFrameHead(nil, FrameHead{Op: OpMerge, Watermark: NoWatermark, ProcessingTime: 7})
	for i := range heads {
		frame = AppendGroupHead(frame, &heads[i], uint32(len(recs[i])))
		for j := range recs[i] {
			frame = AppendRecord(frame, &recs[i][j])
		}
		if heads[i].Flags&GroupTwoSided != 0 {
			frame = AppendSide(frame, uint32(len(right)))
			for j := range right {
				frame = AppendRecord(frame, &right[j])
			}
		}
	}
	SetGroupCount(frame, uint32(len(heads)))

	var gr GroupReader
	if err := gr.Reset(frame); err != nil {
		t.Fatal(err)
	}
	if h := gr.Head(); h.Op != OpMerge || h.Watermark != NoWatermark || h.ProcessingTime != 7 || h.Groups != 4 {
		t.Fatalf("head %+v", h)
	}
	var g GroupHead
	var rec Record
	for i := 0; gr.NextGroup(&g); i++ {
		want := heads[i]
		if g.Flags != want.Flags || !bytes.Equal(g.Key, want.Key) || g.WindowStart != want.WindowStart || g.WindowEnd != want.WindowEnd ||
			!bytes.Equal(g.Acc, want.Acc) || !bytes.Equal(g.Acc2, want.Acc2) || g.TimerTime != want.TimerTime || g.TimerDomain != want.TimerDomain {
			t.Fatalf("group %d: %+v, want %+v", i, g, want)
		}
		var got []string
		for gr.NextRecord(&rec) {
			got = append(got, string(rec.Value))
		}
		if len(got) != len(recs[i]) {
			t.Fatalf("group %d: %d records", i, len(got))
		}
		if g.Flags&GroupTwoSided != 0 {
			if !gr.NextSide() || !gr.OnRight() {
				t.Fatal("no right side")
			}
			n := 0
			for gr.NextRecord(&rec) {
				n++
			}
			if n != len(right) {
				t.Fatalf("right side: %d records", n)
			}
		}
	}
	if err := gr.Err(); err != nil {
		t.Fatal(err)
	}
	if gr.Records() != 6 {
		t.Fatalf("records %d, want 6", gr.Records())
	}
}

func TestGroupReaderSkipsUnreadRecords(t *testing.T) {
	frame := AppendFrameHead(nil, FrameHead{Groups: 2})
	frame = AppendGroupHead(frame, &GroupHead{Key: []byte("a"), Flags: GroupTwoSided}, 2)
	for _, v := range []string{"1", "2"} {
		frame = AppendRecord(frame, &Record{Value: []byte(v)})
	}
	frame = AppendSide(frame, 1)
	frame = AppendRecord(frame, &Record{Value: []byte("r")})
	frame = AppendGroupHead(frame, &GroupHead{Key: []byte("b")}, 1)
	frame = AppendRecord(frame, &Record{Value: []byte("3")})
	var gr GroupReader
	var g GroupHead
	var rec Record
	if gr.Reset(frame) != nil || !gr.NextGroup(&g) || !gr.NextGroup(&g) || string(g.Key) != "b" || !gr.NextRecord(&rec) || string(rec.Value) != "3" {
		t.Fatalf("group %q record %q err %v", g.Key, rec.Value, gr.Err())
	}
	if gr.NextGroup(&g) || gr.Err() != nil {
		t.Fatalf("extra group, err %v", gr.Err())
	}
}

func TestGroupReaderErrors(t *testing.T) {
	good := AppendGroupHead(AppendFrameHead(nil, FrameHead{Groups: 1}), &GroupHead{Key: []byte("k")}, 0)
	tests := map[string][]byte{
		"short head":    good[:10],
		"bad flags":     append(AppendFrameHead(nil, FrameHead{Groups: 1}), 0x80, 0, 0, 0, 0, 0, 0, 0, 0),
		"missing group": AppendFrameHead(nil, FrameHead{Groups: 2}),
		"trailing":      append(append([]byte(nil), good...), 1),
		"short records": AppendGroupHead(AppendFrameHead(nil, FrameHead{Groups: 1}), &GroupHead{}, 3),
	}
	for name, frame := range tests {
		t.Run(name, func(t *testing.T) {
			var gr GroupReader
			err := gr.Reset(frame)
			var g GroupHead
			var rec Record
			for err == nil && gr.NextGroup(&g) {
				for gr.NextRecord(&rec) {
				}
			}
			if err == nil {
				err = gr.Err()
			}
			if !errors.Is(err, ErrMalformedFrame) {
				t.Fatalf("err %v", err)
			}
		})
	}
}

func FuzzGroupReader(f *testing.F) {
	frame := AppendFrameHead(nil, FrameHead{Op: OpAdd, Groups: 1})
	frame = AppendGroupHead(frame, &GroupHead{Key: []byte("k"), Flags: GroupWindow | GroupAcc | GroupTwoSided, Acc: []byte("a")}, 1)
	frame = AppendRecord(frame, &Record{Value: []byte("v")})
	frame = AppendSide(frame, 0)
	f.Add(frame)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var gr GroupReader
		if gr.Reset(data) != nil {
			return
		}
		var g GroupHead
		var rec Record
		for gr.NextGroup(&g) {
			for gr.NextRecord(&rec) {
			}
			if gr.NextSide() {
				for gr.NextRecord(&rec) {
				}
			}
		}
		_ = gr.Err()
	})
}
