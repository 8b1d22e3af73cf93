package exchange

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
)

func TestBufferTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		// steps emit values (an "!" prefix names a watermark, "flush" and
		// "close" call them) and then take what is available.
		steps [][]string
		want  [][]string
	}{
		{"0 sends every record", 0,
			[][]string{{"a"}, {"b", "c"}, {"!3", "d"}},
			[][]string{{"0:a"}, {"0:b", "0:c"}, {"0:event watermark 3", "0:d"}}},
		{"-1 sends on full, event, flush and close", -1,
			[][]string{{"a", "b"}, {"flush"}, {"c", "!4"}, {"d", "e", "f"}, {"close"}},
			[][]string{nil, {"0:a,b"}, {"0:c", "0:event watermark 4"}, {"0:d,e"}, {"0:f", "0:event end of partition"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Two 21-byte records fill a 64-byte buffer.
			cfg := Config{BufferSize: 64, BufferTimeout: tc.timeout}
			e := NewEdge(cfg, 1, 1)
			g := NewGate(cfg, e.Channels(0))
			w := e.Writer(0)
			for i, step := range tc.steps {
				for _, v := range step {
					switch {
					case v == "flush":
						w.Flush()
					case v == "close":
						if err := w.Close(context.Background()); err != nil {
							t.Fatal(err)
						}
					case v[0] == '!':
						wm, err := strconv.ParseInt(v[1:], 10, 64)
						if err != nil {
							t.Fatal(err)
						}
						if err := w.EmitEvent(context.Background(), 0, Watermark{Time: wm}); err != nil {
							t.Fatal(err)
						}
					default:
						emitValue(t, w, 0, v)
					}
				}
				if got := availableDescribed(t, g); fmt.Sprint(got) != fmt.Sprint(tc.want[i]) {
					t.Fatalf("step %d %q: got %q, want %q", i, step, got, tc.want[i])
				}
			}
		})
	}
	t.Run("positive sends eventually", func(t *testing.T) {
		cfg := Config{BufferTimeout: time.Millisecond}
		e := NewEdge(cfg, 1, 1)
		g := NewGate(cfg, e.Channels(0))
		w := e.Writer(0)
		for _, values := range [][]string{{"a"}, {"b", "c"}} {
			for _, v := range values {
				emitValue(t, w, 0, v)
			}
			// Nothing flushes but the timer: Next waits for it.
			var got []string
			var rec abi.Record
			for len(got) < len(values) {
				b, err := g.Next(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				for b.Next(&rec) {
					got = append(got, string(rec.Value))
				}
				b.Recycle()
			}
			if fmt.Sprint(got) != fmt.Sprint(values) {
				t.Fatalf("got %q, want %q", got, values)
			}
		}
	})
}
