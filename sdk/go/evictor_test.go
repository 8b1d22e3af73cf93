package udf

import (
	"reflect"
	"strconv"
	"testing"

	"wasmstream.io/platform/abi"
)

// seen is what test_evict_odd saw of each window: key, bounds, records,
// watermark and when.
var seen []string

func init() {
	// test_evict_odd evicts the records at odd positions, and every record
	// of a window whose first value is "all"; it panics at "panic" and
	// fails at "error".
	Evictor("test_evict_odd", func(e *Eviction) error {
		seen = append(seen, string(e.Key)+" "+strconv.FormatInt(e.Window.Start, 10)+"-"+strconv.FormatInt(e.Window.End, 10)+" "+
			strconv.Itoa(len(e.Records))+" wm "+strconv.FormatInt(e.Watermark, 10)+" after "+strconv.FormatBool(e.After))
		for i, r := range e.Records {
			switch string(r.Value) {
			case "panic":
				panic("boom")
			case "error":
				return errorString("bad record " + strconv.Itoa(i))
			}
			if i%2 == 1 || string(e.Records[0].Value) == "all" {
				e.Evict(i)
			}
		}
		return nil
	})
}

type errorString string

func (e errorString) Error() string { return string(e) }

// evictFrame is an evictor frame at op of one window per group of values.
func evictFrame(op abi.Op, wm int64, groups ...[]string) []byte {
	f := abi.AppendFrameHead(nil, abi.FrameHead{Op: op, Watermark: wm, Groups: uint32(len(groups))})
	for g, values := range groups {
		key := []byte{'a' + byte(g)}
		f = abi.AppendGroupHead(f, &abi.GroupHead{Flags: abi.GroupWindow, Key: key, WindowStart: int64(g) * 10, WindowEnd: int64(g)*10 + 10}, uint32(len(values)))
		for _, v := range values {
			f = abi.AppendRecord(f, &abi.Record{Key: key, Value: []byte(v)})
		}
	}
	return f
}

// TestEvictorFrames: an evictor answers each window with a keep bitmap of
// its records (bits past the last clear), sees the window's key, bounds,
// watermark and op, and fails only the window it panics or errs in.
func TestEvictorFrames(t *testing.T) {
	c := newCaller(&functions)
	fn := uint32(functions.lookup("test_evict_odd"))
	ten := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}
	seen = nil
	got := windowEntries(t, c.call(fn, evictFrame(abi.OpEvictBefore, 42, ten, nil, []string{"x", "panic"}, []string{"all", "y", "z"}, []string{"error"}, []string{"only"})), 6)
	want := []string{"6 0 \x55\x01", "6 1 ", "2 2 panic: boom", "6 3 \x00", "2 4 bad record 0", "6 5 \x01"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("before: %q, want %q", got, want)
	}
	if want := []string{"a 0-10 10 wm 42 after false", "b 10-20 0 wm 42 after false", "c 20-30 2 wm 42 after false",
		"d 30-40 3 wm 42 after false", "e 40-50 1 wm 42 after false", "f 50-60 1 wm 42 after false"}; !reflect.DeepEqual(seen, want) {
		t.Fatalf("seen %q, want %q", seen, want)
	}
	seen = nil
	if got := windowEntries(t, c.call(fn, evictFrame(abi.OpEvictAfter, abi.NoWatermark, []string{"p", "q", "r"})), 1); !reflect.DeepEqual(got, []string{"6 0 \x05"}) {
		t.Fatalf("after: %q", got)
	}
	if want := []string{"a 0-10 3 wm -9223372036854775808 after true"}; !reflect.DeepEqual(seen, want) {
		t.Fatalf("seen %q, want %q", seen, want)
	}
	if got := windowEntries(t, c.call(fn, evictFrame(abi.OpAdd, 0, []string{"p"})), 1); !reflect.DeepEqual(got, []string{"2 0 udf: evictor called with an unknown op"}) {
		t.Fatalf("bad op: %q", got)
	}
}

// TestNewEviction: a native Eviction keeps every record until Evict, which
// refuses an index out of range.
func TestNewEviction(t *testing.T) {
	e := NewEviction(Window{End: 10}, make([]Record, 9))
	for i := range 9 {
		if e.Evicted(i) {
			t.Fatalf("record %d evicted at first", i)
		}
	}
	e.Evict(8)
	if !e.Evicted(8) || e.Evicted(7) {
		t.Fatal("Evict(8) evicted the wrong record")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Evict(9) of 9 records did not panic")
		}
	}()
	e.Evict(9)
}
