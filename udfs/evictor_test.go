package udfs

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
)

// evictorFrame is a custom evictor's grouped frame at op: one window per
// group, of key w<i> and bounds [1000i, 1000i+1000), with the records of
// the values, stamped 1000i + their position (or by stamps, when given).
func evictorFrame(op abi.Op, watermark int64, windows [][]string, stamps ...[]int64) []byte {
	f := abi.AppendFrameHead(nil, abi.FrameHead{Op: op, Watermark: watermark, Groups: uint32(len(windows))})
	for i, values := range windows {
		start := int64(1000 * i)
		g := abi.GroupHead{Flags: abi.GroupWindow, Key: []byte(fmt.Sprintf("w%d", i)), WindowStart: start, WindowEnd: start + 1000}
		f = abi.AppendGroupHead(f, &g, uint32(len(values)))
		for j, v := range values {
			ts := start + int64(j)
			if i < len(stamps) {
				ts = stamps[i][j]
			}
			f = abi.AppendRecord(f, &abi.Record{Key: g.Key, Value: []byte(v), Timestamp: ts})
		}
	}
	return f
}

// ns are {"n":v} values.
func ns(vs ...int64) []string {
	var out []string
	for _, v := range vs {
		out = append(out, fmt.Sprintf(`{"n":%d}`, v))
	}
	return out
}

// keep is the keep-bitmap entry of window g that keeps the records kept.
func keep(g uint32, records int, kept ...int) abi.Entry {
	b := make([]byte, abi.KeepBitmapLen(records))
	for _, i := range kept {
		abi.Keep(b, i)
	}
	if len(b) == 0 {
		b = nil
	}
	return abi.Entry{Tag: abi.TagAccumulator, Index: g, Value: b}
}

// TestEvictorsAcrossLanguages runs the custom evictors of udfs/evictor,
// udfs/evictor-c and udfs/evictor-as over the same frames, before and after the window
// function, and checks exact keep bitmaps and errors, the same in every
// language; then over random windows, byte for byte the Go module's.
func TestEvictorsAcrossLanguages(t *testing.T) {
	failed := func(g uint32, msg string) abi.Entry {
		return abi.Entry{Tag: abi.TagError, Index: g, Message: []byte(msg)}
	}
	tests := []struct {
		fn    string
		frame []byte
		want  []abi.Entry
	}{
		{"near_newest", evictorFrame(abi.OpEvictBefore, abi.NoWatermark, [][]string{ns(1, 30, 21, 20, 25), nil, ns(-10, 10, 11, -11, 0)}),
			[]abi.Entry{keep(0, 5, 1, 2, 3, 4), keep(1, 0), keep(2, 5, 0, 1, 4)}},
		// The newest record is the one of the greatest timestamp, not the
		// last: 50 at 900.
		{"near_newest", evictorFrame(abi.OpEvictAfter, 500, [][]string{ns(1, 50, 45, 3)}, []int64{10, 900, 20, 30}),
			[]abi.Entry{keep(0, 4, 1, 2)}},
		{"near_newest", evictorFrame(abi.OpEvictBefore, 0, [][]string{ns(-9223372036854775808, 9223372036854775807), {`{"n":1}`, `{"n":1.5}`}, ns(7)}),
			[]abi.Entry{keep(0, 2, 1), failed(1, "record 1: no integer n"), keep(2, 1, 0)}},
		{"top2", evictorFrame(abi.OpEvictBefore, abi.NoWatermark, [][]string{ns(3, 9, 1, 9, 4), ns(5, 7, 5, 5), ns(1), ns(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)}),
			[]abi.Entry{keep(0, 5, 1, 3), keep(1, 4, 0, 1), keep(2, 1, 0), keep(3, 11, 9, 10)}},
		{"top2", evictorFrame(abi.OpEvictAfter, 7, [][]string{{"{}"}, ns(2, 2, 2)}),
			[]abi.Entry{failed(0, "record 0: no integer n"), keep(1, 3, 0, 1)}},
		{"top2", evictorFrame(abi.OpTriggerElement, 7, [][]string{ns(2)}),
			[]abi.Entry{failed(0, "udf: evictor called with an unknown op")}},
	}
	rng := rand.New(rand.NewSource(16))
	var random []string
	for range 300 {
		var windows [][]string
		for range 1 + rng.Intn(4) {
			var values []int64
			for range rng.Intn(20) {
				values = append(values, rng.Int63n(60)-30)
			}
			windows = append(windows, ns(values...))
		}
		random = append(random, string(evictorFrame(abi.OpEvictBefore+abi.Op(rng.Intn(2)), rng.Int63n(1000), windows)))
	}
	ctx := context.Background()
	goEv := instantiate(t, "evictor")
	for _, name := range []string{"evictor", "evictor-c", "evictor-as"} {
		t.Run(name, func(t *testing.T) {
			in := instantiate(t, name)
			if !reflect.DeepEqual(in.desc, goEv.desc) {
				t.Fatalf("description %+v, want %+v", in.desc, goEv.desc)
			}
			for _, tt := range tests {
				got, err := in.callFrame(ctx, tt.fn, tt.frame, 16)
				if err != nil {
					t.Fatalf("%s: %v", tt.fn, err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s: got  %+v\nwant %+v", tt.fn, got, tt.want)
				}
			}
			for i, f := range random {
				for _, fn := range []string{"near_newest", "top2"} {
					want, err := goEv.callFrame(ctx, fn, []byte(f), 16)
					if err != nil {
						t.Fatal(err)
					}
					got, err := in.callFrame(ctx, fn, []byte(f), 16)
					if err != nil || !reflect.DeepEqual(got, want) {
						t.Fatalf("random frame %d, %s: got %+v, %v\nwant %+v", i, fn, got, err, want)
					}
				}
			}
		})
	}
}

// TestEvictorCrash: a record "crash" fails its window in Go (a panic the
// SDK recovers, the other windows answered) and traps the call in C and
// AssemblyScript, as the READMEs of udfs/evictor-c and udfs/evictor-as say.
func TestEvictorCrash(t *testing.T) {
	ctx := context.Background()
	f := evictorFrame(abi.OpEvictBefore, 0, [][]string{ns(1), {"crash"}, ns(2, 3)})
	got, err := instantiate(t, "evictor").callFrame(ctx, "top2", f, 3)
	want := []abi.Entry{keep(0, 1, 0), {Tag: abi.TagError, Index: 1, Message: []byte("panic: crash")}, keep(2, 2, 0, 1)}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("go: got %+v, %v\nwant %+v", got, err, want)
	}
	for _, name := range []string{"evictor-c", "evictor-as"} {
		if _, err := instantiate(t, name).callFrame(ctx, "top2", f, 3); err == nil || !strings.Contains(err.Error(), "unreachable") {
			t.Fatalf("%s: error %v, want a trap", name, err)
		}
	}
}
