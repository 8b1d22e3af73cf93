package exchange

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/checkpoint"
)

// frameValues lists the values of a frame's records, comma separated.
func frameValues(t *testing.T, frame []byte) string {
	t.Helper()
	ir, err := abi.NewInputReader(frame)
	if err != nil {
		t.Fatal(err)
	}
	var vs []string
	var rec abi.Record
	for ir.Next(&rec) {
		vs = append(vs, string(rec.Value))
	}
	if err := ir.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(vs, ",")
}

// testBarrier is the unaligned barrier the tests overtake with.
var testBarrier = Barrier{checkpoint.Barrier{ID: 7, Kind: checkpoint.KindCheckpoint}}

// saver collects what OvertakeEvent hands over, as "<channel>:<values>".
func saver(t *testing.T, saved *[]string) func(int, []byte) {
	return func(channel int, frame []byte) {
		*saved = append(*saved, fmt.Sprintf("%d:%s", channel, frameValues(t, frame)))
	}
}

// TestOvertakeUnderBackpressure: with the pool empty and the consumer
// holding the only credit, the barrier still goes out at once, ahead of the
// sent and backlogged buffers, which are handed over for the checkpoint and
// then delivered after it in their order.
func TestOvertakeUnderBackpressure(t *testing.T) {
	for _, tc := range []struct {
		name      string
		consumers int
		// emits are the values emitted per channel, in order.
		emits [][]string
		// wantFirst is what the consumer of channel 0 gets before it
		// recycles anything; wantSaved what OvertakeEvent handed over.
		wantFirst []string
		wantSaved []string
		wantBytes int64
	}{
		{
			name: "one channel", consumers: 1,
			emits:     [][]string{{"aaaa", "bbbb", "cccc", "dddd"}},
			wantFirst: []string{"0:aaaa", "0:event barrier 7"},
			wantSaved: []string{"0:bbbb", "0:cccc", "0:dddd"},
			wantBytes: 3 * (4 + 24),
		},
		{
			name: "partial buffers of two channels", consumers: 2,
			emits:     [][]string{{"a1", "a2"}, {"b1"}},
			wantFirst: []string{"0:a1", "0:event barrier 7"},
			wantSaved: []string{"0:a2", "1:b1"},
			wantBytes: 2 * (4 + 22),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// One record per buffer, one credit per channel, no floating
			// buffers, and a pool with exactly one buffer per emitted record.
			pool := 0
			for _, vs := range tc.emits {
				pool += len(vs)
			}
			cfg := Config{BufferSize: 40, ExclusivePerChannel: 1, BuffersPerWriter: pool, BufferTimeout: -1}
			e := NewEdge(cfg, 1, tc.consumers)
			gates := make([]*Gate, tc.consumers)
			for c := range gates {
				gates[c] = NewGate(cfg, e.Channels(c))
				// A zero Config field takes its default: take the
				// floating buffers away by hand.
				gates[c].floating, gates[c].freeFloating = 0, 0
			}
			w := e.Writer(0)
			for ch, vs := range tc.emits {
				for _, v := range vs {
					emitValue(t, w, ch, v)
				}
			}
			// The consumer of channel 0 takes its first buffer and keeps it.
			held, err := gates[0].Next(cancelled)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.EmitEvent(cancelled, 0, Watermark{Time: 1}); !errors.Is(err, context.Canceled) {
				t.Fatalf("EmitEvent with an empty pool: %v, want it to wait", err)
			}
			var saved []string
			n, err := w.OvertakeEvent(testBarrier, saver(t, &saved))
			if err != nil {
				t.Fatal(err)
			}
			got := []string{describeBuffer(held)}
			got = append(got, availableDescribed(t, gates[0])...)
			if strings.Join(got, " ") != strings.Join(tc.wantFirst, " ") {
				t.Fatalf("consumer 0 got %q, want %q", got, tc.wantFirst)
			}
			if strings.Join(saved, " ") != strings.Join(tc.wantSaved, " ") || n != tc.wantBytes {
				t.Fatalf("saved %q (%d bytes), want %q (%d bytes)", saved, n, tc.wantSaved, tc.wantBytes)
			}
			// Recycling lets the overtaken buffers follow, in order.
			held.Recycle()
			for c, g := range gates {
				var rest []string
				for {
					bs := available(t, g)
					if len(bs) == 0 {
						break
					}
					for _, b := range bs {
						rest = append(rest, describeBuffer(b))
						b.Recycle()
					}
				}
				var want []string
				for i, v := range tc.emits[c] {
					if c == 0 && i == 0 {
						continue
					}
					if c > 0 && i == 0 {
						want = append(want, fmt.Sprintf("%d:event barrier 7", 0))
					}
					want = append(want, fmt.Sprintf("%d:%s", 0, v))
				}
				if strings.Join(rest, " ") != strings.Join(want, " ") {
					t.Fatalf("consumer %d then got %q, want %q", c, rest, want)
				}
			}
		})
	}
}

// TestOvertakeSpanningRecords: the barrier never splits a record. A record
// the consumer started reassembling comes before it; one it did not start
// goes behind it and is handed over joined into one frame.
func TestOvertakeSpanningRecords(t *testing.T) {
	big := strings.Repeat("x", 150)
	for _, tc := range []struct {
		name string
		// started: the consumer has taken the big record's first fragment.
		started   bool
		wantOrder string
		wantSaved string
	}{
		{"not started", false, "event barrier 7," + big + ",small", "0:" + big + " 0:small"},
		{"started", true, big + ",event barrier 7,small", "0:small"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{BufferSize: 64, ExclusivePerChannel: 8, BufferTimeout: -1}
			e := NewEdge(cfg, 1, 1)
			g := NewGate(cfg, e.Channels(0))
			w := e.Writer(0)
			emitValue(t, w, 0, big)
			var order []string
			if tc.started {
				// What Next does with a first fragment, stopping there.
				g.mu.Lock()
				first := g.pop()
				g.mu.Unlock()
				if first.kind != KindFragment || first.size == 0 {
					t.Fatalf("first buffer is not a record's first fragment: kind %d size %d", first.kind, first.size)
				}
				if r := first.ch.assemble(first); r != nil {
					t.Fatal("a one-fragment record")
				}
			}
			emitValue(t, w, 0, "small")
			var saved []string
			if _, err := w.OvertakeEvent(testBarrier, saver(t, &saved)); err != nil {
				t.Fatal(err)
			}
			for _, b := range available(t, g) {
				if ev := b.Event(); ev != nil {
					order = append(order, fmt.Sprintf("event %v", ev))
				} else {
					order = append(order, frameValues(t, b.Frame()))
				}
				b.Recycle()
			}
			if got := strings.Join(order, ","); got != tc.wantOrder {
				t.Fatalf("delivered %q, want %q", got, tc.wantOrder)
			}
			if got := strings.Join(saved, " "); got != tc.wantSaved {
				t.Fatalf("saved %q, want %q", got, tc.wantSaved)
			}
		})
	}
}

// TestOvertakeClosedWriter: a closed writer sends no barrier.
func TestOvertakeClosedWriter(t *testing.T) {
	e := NewEdge(Config{}, 1, 1)
	NewGate(Config{}, e.Channels(0))
	w := e.Writer(0)
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := w.OvertakeEvent(testBarrier, func(int, []byte) { t.Fatal("saved data of a closed writer") }); !errors.Is(err, ErrClosed) {
		t.Fatalf("OvertakeEvent after Close: %v, want ErrClosed", err)
	}
}
