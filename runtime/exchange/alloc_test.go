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
