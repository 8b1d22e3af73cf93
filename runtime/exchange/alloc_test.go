package exchange

import (
	"context"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
)

func TestSteadyStateAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		timeout time.Duration
	}{
		{"full buffers", -1},
		{"flush every record", 0},
		// The timer never fires during the test; Emit takes the writer's
		// mutex.
		{"timeout", time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{BufferSize: 512, BufferTimeout: tc.timeout}
			e := NewEdge(cfg, 1, 2)
			gates := []*Gate{NewGate(cfg, e.Channels(0)), NewGate(cfg, e.Channels(1))}
			w := e.Writer(0)
			rec := fixedRecord(7)
			batch := []abi.Record{*fixedRecord(1), *fixedRecord(2)}
			var part Partitioner = NewRebalance(2, 0)
			var ev Event = Watermark{Time: 1000}
			var out abi.Record
			records := 0
			cycle := func() {
				for range 20 {
					for i := range 4 {
						if err := w.Emit(ctx, i%2, rec); err != nil {
							t.Fatal(err)
						}
					}
					if err := w.EmitBatch(ctx, part, batch); err != nil {
						t.Fatal(err)
					}
					for _, g := range gates {
						for {
							b, err := g.Next(cancelled)
							if err != nil {
								break
							}
							for b.Next(&out) {
								records++
							}
							b.Recycle()
						}
					}
				}
				if err := w.BroadcastEvent(ctx, ev); err != nil {
					t.Fatal(err)
				}
				w.Flush()
			}
			cycle()
			if n := testing.AllocsPerRun(20, cycle); n != 0 {
				t.Fatalf("%v allocations per cycle, want 0", n)
			}
			if records == 0 {
				t.Fatal("no record went through")
			}
		})
	}
}

func TestPartitionersAllocateNothing(t *testing.T) {
	rec := fixedRecord(3)
	for _, p := range []Partitioner{Forward(1), NewRebalance(4, 0), NewKeyGroups(128, 4)} {
		if n := testing.AllocsPerRun(100, func() { p.Channel(rec) }); n != 0 {
			t.Errorf("%T: %v allocations, want 0", p, n)
		}
	}
}

// TestRemoteSteadyStateAllocatesNothing: the seam for channels between
// processes (an outbox and an inbox, joined here without a transport)
// allocates nothing per buffer either.
func TestRemoteSteadyStateAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	cfg := Config{BufferSize: 512, BufferTimeout: -1}
	out, in := NewEdge(cfg, 1, 1), NewEdge(cfg, 1, 1)
	g := NewGate(cfg, in.Channels(0))
	ob := NewOutbox(out.Channels(0)[0])
	// The announcements, applied after each step; the callback runs with
	// the gate's mutex held, so it only adds up.
	var credits, released int
	inbox := NewInbox(in.Channels(0)[0], func(c, r int) { credits += c; released += r })
	apply := func() {
		ob.Credit(0, credits)
		ob.Release(0, released)
		credits, released = 0, 0
	}
	apply()
	ob.Open(0)
	w := out.Writer(0)
	rec := fixedRecord(7)
	var out1 abi.Record
	records := 0
	cycle := func() {
		for range 40 {
			if err := w.Emit(ctx, 0, rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.EmitEvent(ctx, 0, Watermark{Time: 1}); err != nil {
			t.Fatal(err)
		}
		// Move and consume until nothing moves: each recycled buffer
		// lets the outbox send more.
		for moved := true; moved; {
			moved = false
			for {
				_, p, err := ob.Next(cancelled)
				if err != nil {
					break
				}
				if err := inbox.Receive(p, nil); err != nil {
					t.Fatal(err)
				}
				moved = true
			}
			for {
				b, err := g.Next(cancelled)
				if err != nil {
					break
				}
				for b.Next(&out1) {
					records++
				}
				b.Recycle()
				apply()
				moved = true
			}
		}
	}
	cycle()
	if n := testing.AllocsPerRun(20, cycle); n != 0 {
		t.Fatalf("%v allocations per cycle, want 0", n)
	}
	if records == 0 {
		t.Fatal("no record went through")
	}
}
