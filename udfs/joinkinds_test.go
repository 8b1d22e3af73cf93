package udfs

import (
	"context"
	"reflect"
	"testing"

	"wasmstream.io/platform/abi"
)

// joinGroup is a two-sided group of a join frame: a window join's when
// window is set, an interval join's otherwise.
type joinGroup struct {
	key         string
	window      bool
	left, right []abi.Record
}

// joinFrame encodes a grouped frame of two-sided groups, each window
// [10000, 20000) when it has one.
func joinFrame(groups []joinGroup) []byte {
	f := abi.AppendFrameHead(nil, abi.FrameHead{Op: abi.OpNone, Watermark: 9_000, ProcessingTime: 1, Groups: uint32(len(groups))})
	for _, g := range groups {
		h := abi.GroupHead{Flags: abi.GroupTwoSided, Key: []byte(g.key)}
		if g.window {
			h.Flags |= abi.GroupWindow
			h.WindowStart, h.WindowEnd = 10_000, 20_000
		}
		f = abi.AppendGroupHead(f, &h, uint32(len(g.left)))
		for i := range g.left {
			f = abi.AppendRecord(f, &g.left[i])
		}
		f = abi.AppendSide(f, uint32(len(g.right)))
		for i := range g.right {
			f = abi.AppendRecord(f, &g.right[i])
		}
	}
	return f
}

// TestJoinKindsAcrossLanguages runs the join and coGroup functions of every
// language's joinkinds module over the same window-join and interval-join
// frames and checks that the output entries are exactly the Go module's.
func TestJoinKindsAcrossLanguages(t *testing.T) {
	h := abi.Header{Name: []byte("h"), Value: []byte("1")}
	rec := func(v string, ts int64, hs ...abi.Header) abi.Record {
		return abi.Record{Key: []byte("ignored"), Value: []byte(v), Timestamp: ts, Headers: hs}
	}
	frames := []struct {
		function string
		groups   []joinGroup
	}{
		{"pairs", []joinGroup{
			{"a", true, []abi.Record{rec("l1", 11_000, h), rec("l2", 12_000)}, []abi.Record{rec("r1", 13_000), rec("skip", 14_000), rec("r2", 10_000)}},
			{"", true, []abi.Record{rec("two", 15_000)}, []abi.Record{rec("r3", 16_000, h)}},
			{"b", true, []abi.Record{rec("fail", 15_000)}, []abi.Record{rec("r4", 16_000)}},
			{"c", true, []abi.Record{rec("", 19_999)}, []abi.Record{rec("", 10_000)}},
		}},
		{"pairs", []joinGroup{
			{"u1", false, []abi.Record{rec("order", 5_000)}, []abi.Record{rec("p1", 4_000), rec("p2", 6_000)}},
			{"u2", false, []abi.Record{rec("two", 8_000)}, []abi.Record{rec("p3", 8_000)}},
			{"u3", false, []abi.Record{rec("alone", 9_000)}, nil},
			{"u4", false, []abi.Record{rec("fail", 9_500)}, []abi.Record{rec("p4", 9_400)}},
		}},
		{"sides", []joinGroup{
			{"a", true, []abi.Record{rec("l1", 11_000), rec("l2", 12_000, h)}, []abi.Record{rec("r1", 13_000)}},
			{"b", true, nil, []abi.Record{rec("r2", 13_000), rec("r3", 13_500)}},
			{"c", true, []abi.Record{rec("l3", 11_000)}, nil},
			{"", true, []abi.Record{rec("", 11_000)}, []abi.Record{rec("", 12_000)}},
		}},
	}
	ctx := context.Background()
	goJoin := instantiate(t, "joinkinds")
	for _, lang := range sdkLanguages {
		t.Run(lang, func(t *testing.T) {
			in := instantiate(t, "joinkinds-"+lang)
			if !reflect.DeepEqual(in.desc, goJoin.desc) {
				t.Fatalf("description %+v, want %+v", in.desc, goJoin.desc)
			}
			for i, fr := range frames {
				f := joinFrame(fr.groups)
				limit := uint32(len(fr.groups))
				want, err := goJoin.callFrame(ctx, fr.function, f, limit)
				if err != nil {
					t.Fatal(err)
				}
				if len(want) == 0 {
					t.Fatalf("frame %d: go emitted nothing", i)
				}
				got, err := in.callFrame(ctx, fr.function, f, limit)
				if err != nil {
					t.Fatalf("frame %d (%s): %v", i, fr.function, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("frame %d (%s): got  %+v\nwant %+v", i, fr.function, got, want)
				}
			}
		})
	}
}
