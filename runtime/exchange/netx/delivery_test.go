package netx

import (
	"context"
	"fmt"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/runtime/exchange"
)

// TestExactDelivery: every record arrives once, in its channel's order,
// over one channel and over a partitioned edge of several, whatever the
// buffer sizes, credits, flush policy and start order.
func TestExactDelivery(t *testing.T) {
	url := startServer(t)
	a, b := connect(t, url, "worker-a"), connect(t, url, "worker-b")
	const records = 3000
	for _, tc := range []struct {
		name                 string
		producers, consumers int
		cfg                  exchange.Config
		// size is a record's value size given its sequence number.
		size        func(seq int) int
		batch       int
		senderFirst bool
	}{
		{"1x1", 1, 1, exchange.Config{BufferSize: 1024, BufferTimeout: -1}, func(seq int) int { return seq % 40 }, 0, false},
		{"2x4 hash", 2, 4, exchange.Config{BufferSize: 512, BufferTimeout: -1}, func(seq int) int { return seq % 40 }, 0, false},
		{"2x4 hash, sender first", 2, 4, exchange.Config{BufferSize: 512, BufferTimeout: -1}, func(seq int) int { return seq % 40 }, 0, true},
		{"2x4 tight credits", 2, 4, exchange.Config{BufferSize: 128, ExclusivePerChannel: 1, FloatingPerGate: 1, BuffersPerWriter: 4, BufferTimeout: -1}, func(seq int) int { return seq % 40 }, 0, false},
		{"2x2 flush every record", 2, 2, exchange.Config{BufferTimeout: 0}, func(seq int) int { return 16 }, 0, false},
		{"2x2 timeout batches", 2, 2, exchange.Config{BufferSize: 4096, BufferTimeout: time.Millisecond}, func(seq int) int { return seq % 100 }, 64, false},
		{"1x2 spanning records", 1, 2, exchange.Config{BufferSize: 64, BufferTimeout: -1}, func(seq int) int { return []int{0, 30, 100, 1000, 5}[seq%5] }, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			part := exchange.NewKeyGroups(128, tc.consumers)
			want := expect(tc.producers, tc.consumers)
			for p := range tc.producers {
				for seq := range records {
					r := record(p, seq, tc.size(seq))
					c := part.Channel(&r)
					want[c][p] = append(want[c][p], describe(&r))
				}
			}
			e := newNetEdge(t, a, b, tc.cfg, tc.producers, tc.consumers, setup{senderFirst: tc.senderFirst})
			got := e.run(t, ctx, tc.producers, func(ctx context.Context, w *exchange.Writer, p int) error {
				var batch []abi.Record
				for seq := range records {
					r := record(p, seq, tc.size(seq))
					if tc.batch == 0 {
						if err := w.Emit(ctx, part.Channel(&r), &r); err != nil {
							return err
						}
						continue
					}
					if batch = append(batch, r); len(batch) == tc.batch || seq == records-1 {
						if err := w.EmitBatch(ctx, part, batch); err != nil {
							return err
						}
						batch = batch[:0]
					}
				}
				return nil
			})
			compare(t, got, want)
		})
	}
}

// TestEventsInOrder: watermarks, idleness and aligned barriers travel in
// band, in order with the records of their channel, their fields intact,
// and EndOfPartition ends every channel.
func TestEventsInOrder(t *testing.T) {
	url := startServer(t)
	a, b := connect(t, url, "worker-a"), connect(t, url, "worker-b")
	const producers, consumers, records, every = 2, 3, 600, 7
	events := func(seq int) exchange.Event {
		switch seq / every % 4 {
		case 0:
			return exchange.Watermark{Time: int64(seq) - 100}
		case 1:
			return exchange.Idle{Idle: seq%2 == 0}
		case 2:
			return exchange.Barrier{Barrier: checkpoint.Barrier{ID: int64(seq), Kind: checkpoint.KindSavepoint, Stop: seq%3 == 0}}
		}
		return exchange.Barrier{Barrier: checkpoint.Barrier{ID: int64(seq), Kind: checkpoint.KindCheckpoint}}
	}
	for _, cfg := range []exchange.Config{
		{BufferSize: 256, BufferTimeout: -1},
		{BufferTimeout: 0},
		{BufferSize: 64, ExclusivePerChannel: 1, FloatingPerGate: 1, BuffersPerWriter: 3, BufferTimeout: -1},
	} {
		t.Run(fmt.Sprintf("buffer %d timeout %v credits %d", cfg.BufferSize, cfg.BufferTimeout, cfg.ExclusivePerChannel), func(t *testing.T) {
			ctx := testCtx(t)
			want := expect(producers, consumers)
			for p := range producers {
				part := exchange.NewRebalance(consumers, p)
				for seq := range records {
					r := record(p, seq, 16)
					c := part.Channel(&r)
					want[c][p] = append(want[c][p], describe(&r))
					if seq%every == every-1 {
						for c := range consumers {
							want[c][p] = append(want[c][p], fmt.Sprintf("event %v", events(seq)))
						}
					}
				}
			}
			e := newNetEdge(t, a, b, cfg, producers, consumers, setup{})
			got := e.run(t, ctx, producers, func(ctx context.Context, w *exchange.Writer, p int) error {
				part := exchange.NewRebalance(consumers, p)
				for seq := range records {
					r := record(p, seq, 16)
					if err := w.Emit(ctx, part.Channel(&r), &r); err != nil {
						return err
					}
					if seq%every == every-1 {
						if err := w.BroadcastEvent(ctx, events(seq)); err != nil {
							return err
						}
					}
				}
				return nil
			})
			compare(t, got, want)
		})
	}
}
