package udf

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"testing"

	"wasmstream.io/platform/abi"
)

// testWindowList keeps, per key and window, the values of the records of
// each firing.
var testWindowList = ListState("test_window_list")

func init() {
	ProcessWindowWithState("test_window_state", func(ctx *Context, key []byte, w Window, recs []Record) error {
		for _, r := range recs {
			switch string(r.Value) {
			case "timer":
				ctx.RegisterEventTimer(w.End)
			case "error":
				ctx.EmitValue([]byte("dropped"))
				testWindowList.Append(ctx, r.Value)
				return errors.New("bad window")
			}
			testWindowList.Append(ctx, r.Value)
		}
		seen := testWindowList.Get(ctx)
		ctx.EmitValue(fmt.Appendf(nil, "%s %d-%d %q", key, w.Start, w.End, seen))
		return nil
	})
	ProcessWindowWithState("test_window_stateless", func(ctx *Context, key []byte, w Window, recs []Record) error {
		ctx.Emit(Record{Key: []byte("other"), Value: strconv.AppendInt(nil, int64(len(recs)), 10), Timestamp: 3})
		return nil
	})
}

// Each group of a frame enters its own key and window: the list of one
// window of one key holds only that window's records.
func TestProcessWindowWithStateScopesGroups(t *testing.T) {
	h := NewHarness("")
	frame := abi.AppendFrameHead(nil, abi.FrameHead{Groups: 3})
	groups := []struct {
		key  string
		w    Window
		vals []string
	}{
		{"a", Window{0, 10}, []string{"x", "y"}},
		{"a", Window{10, 20}, []string{"z"}},
		{"b", Window{0, 10}, []string{"w"}},
	}
	var keys, spaces [][]byte
	var in []Record
	for _, g := range groups {
		frame = abi.AppendGroupHead(frame, &abi.GroupHead{Flags: abi.GroupWindow, Key: []byte(g.key), WindowStart: g.w.Start, WindowEnd: g.w.End}, uint32(len(g.vals)))
		for _, v := range g.vals {
			frame = abi.AppendRecord(frame, &abi.Record{Value: []byte(v), Timestamp: g.w.Start})
		}
		keys, spaces = append(keys, []byte(g.key)), append(spaces, windowSpace(g.w))
		in = append(in, Record{Key: []byte(g.key), Timestamp: g.w.End - 1})
	}
	out, err := resolve(h.call(functions.lookupKind(t, "test_window_state"), frame, keys, spaces), in)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range out {
		got = append(got, fmt.Sprintf("%d %s@%d %s", o.Index, o.Record.Key, o.Record.Timestamp, o.Record.Value))
	}
	want := []string{`0 a@9 a 0-10 ["x" "y"]`, `1 a@19 a 10-20 ["z"]`, `2 b@9 b 0-10 ["w"]`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestProcessWindowWithState(t *testing.T) {
	w := Window{Start: 0, End: 10}
	tests := []struct {
		name string
		// firings are the record values of each firing of window w of key k.
		firings [][]string
		want    []Output
	}{
		{
			name:    "a re-firing sees the state of the first",
			firings: [][]string{{"a"}, {"a", "b"}},
			want:    []Output{{Record: Record{Key: []byte("k"), Value: []byte(`k 0-10 ["a" "a" "b"]`), Timestamp: 9}}},
		},
		{
			name:    "an error discards the window's output and keeps its state changes",
			firings: [][]string{{"error"}, {"c"}},
			want:    []Output{{Record: Record{Key: []byte("k"), Value: []byte(`k 0-10 ["error" "c"]`), Timestamp: 9}}},
		},
		{
			name:    "timers are refused",
			firings: [][]string{{"timer"}},
			want:    []Output{{Err: "panic: udf: window process functions have no timers (as Flink's ProcessWindowFunction): a window fires when the watermark passes its end"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHarness("")
			var out []Output
			for _, vals := range tt.firings {
				var recs []Record
				for _, v := range vals {
					recs = append(recs, Record{Value: []byte(v), Timestamp: 1})
				}
				var err error
				if out, err = h.ProcessWindow("test_window_state", []byte("k"), w, recs...); err != nil {
					t.Fatal(err)
				}
			}
			if !reflect.DeepEqual(out, tt.want) {
				t.Fatalf("last firing: got %+v, want %+v", out, tt.want)
			}
		})
	}
}

// A function that uses no state never enters its group, so it runs without
// any state from the platform (here, without a harness).
func TestProcessWindowWithStateEntersOnUse(t *testing.T) {
	out, err := InvokeProcessWindow("test_window_stateless", []byte("k"), Window{Start: 0, End: 10}, []Record{{Value: []byte("x")}, {Value: []byte("y")}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Output{{Record: Record{Key: []byte("other"), Value: []byte("2"), Timestamp: 3}}}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("got %+v, want %+v", out, want)
	}
}

// PurgeWindow clears every state of the window, and only of that window.
func TestHarnessPurgeWindow(t *testing.T) {
	h := NewHarness("")
	for _, w := range []Window{{0, 10}, {10, 20}} {
		if _, err := h.ProcessWindow("test_window_state", []byte("k"), w, Record{Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	h.PurgeWindow([]byte("k"), Window{0, 10})
	for _, tc := range []struct {
		w    Window
		want string
	}{{Window{0, 10}, `k 0-10 ["v"]`}, {Window{10, 20}, `k 10-20 ["v" "v"]`}} {
		out, err := h.ProcessWindow("test_window_state", []byte("k"), tc.w, Record{Value: []byte("v")})
		if err != nil || len(out) != 1 || string(out[0].Record.Value) != tc.want {
			t.Fatalf("window %v after purging [0,10): %+v %v, want %s", tc.w, out, err, tc.want)
		}
	}
}
