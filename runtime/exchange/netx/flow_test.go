package netx

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/runtime/exchange"
)

// fixedRecord is 44 bytes encoded: an 8-byte key and a 16-byte value
// holding seq.
func fixedRecord(seq int) *abi.Record {
	r := &abi.Record{Key: make([]byte, 8), Value: make([]byte, 16)}
	binary.LittleEndian.PutUint64(r.Value, uint64(seq))
	return r
}

// waitFor polls cond until it holds or ctx ends.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// nextWithin is Gate.Next waiting at most d; nil when nothing came.
func nextWithin(t *testing.T, g *exchange.Gate, d time.Duration) *exchange.Buffer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	b, err := g.Next(ctx)
	if err != nil {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Next: %v", err)
		}
		return nil
	}
	return b
}

// TestBackpressure: a consumer that does not recycle stops its producer in
// another process once the credits are used, exactly as in one process:
// the receiver holds the channel's exclusive credits and the floating
// buffer, the sender nothing beyond them, the writer's pool is spent and
// its backpressured time grows; then everything arrives, nothing lost.
func TestBackpressure(t *testing.T) {
	url := startServer(t)
	a, b := connect(t, url, "worker-a"), connect(t, url, "worker-b")
	cfg := exchange.Config{BufferSize: 256, ExclusivePerChannel: 2, FloatingPerGate: 1, BuffersPerWriter: 4, BufferTimeout: -1}
	const total, perBuffer = 2000, 5
	for _, network := range []bool{false, true} {
		name := "in-process"
		if network {
			name = "network"
		}
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			var (
				w *exchange.Writer
				g *exchange.Gate
			)
			if network {
				e := newNetEdge(t, a, b, cfg, 1, 1, setup{})
				w, g = e.out.Writer(0), e.gates[0]
			} else {
				e := exchange.NewEdge(cfg, 1, 1)
				w, g = e.Writer(0), exchange.NewGate(cfg, e.Channels(0))
			}
			done := make(chan error, 1)
			go func() {
				for seq := range total {
					if err := w.Emit(ctx, 0, fixedRecord(seq)); err != nil {
						done <- err
						return
					}
				}
				done <- w.Close(ctx)
			}()
			// The consumer takes what comes and keeps it, until it holds
			// every credit and the writer has been waiting for a buffer
			// for a while.
			var held []*exchange.Buffer
			waitFor(t, ctx, "the writer to block", func() bool {
				for b := nextWithin(t, g, 10*time.Millisecond); b != nil; b = nextWithin(t, g, 10*time.Millisecond) {
					held = append(held, b)
				}
				if g.Stats().InPoolUsage < 1 {
					return false
				}
				before := w.Stats().BackpressuredNanos
				time.Sleep(30 * time.Millisecond)
				return w.Stats().BackpressuredNanos-before >= int64(20*time.Millisecond)
			})
			if b := nextWithin(t, g, 100*time.Millisecond); b != nil {
				t.Fatal("a buffer arrived beyond the credits")
			}
			if len(held) != 3 {
				t.Fatalf("the consumer holds %d buffers, want 3 (2 exclusive credits and the floating buffer)", len(held))
			}
			if s := g.Stats(); s.ExclusiveInUse != 2 || s.FloatingInUse != 1 || s.InPoolUsage != 1 {
				t.Fatalf("gate stats %+v, want every credit in use", s)
			}
			s := w.Stats()
			if s.OutPoolUsage != 1 || s.BackpressuredNanos <= 0 {
				t.Fatalf("writer stats %+v, want the pool spent and backpressure", s)
			}
			// The writer filled its 4 buffers and no more.
			if s.BuffersSent != 4 {
				t.Fatalf("the writer sent %d buffers, want 4", s.BuffersSent)
			}
			next := 0
			var rec abi.Record
			check := func(b *exchange.Buffer) {
				for b.Next(&rec) {
					if seq := int(binary.LittleEndian.Uint64(rec.Value)); seq != next {
						t.Fatalf("record %d arrived as number %d", seq, next)
					}
					next++
				}
				b.Recycle()
			}
			for _, b := range held {
				check(b)
			}
			if next != len(held)*perBuffer {
				t.Fatalf("the held buffers had %d records, want %d", next, len(held)*perBuffer)
			}
			for {
				b, err := g.Next(ctx)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				check(b)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if next != total {
				t.Fatalf("got %d records, want %d", next, total)
			}
			if s := w.Stats(); s.OutPoolUsage != 0 && !network {
				t.Fatalf("writer stats %+v after the end, want the pool back", s)
			}
		})
	}
}

// TestUnalignedBarrier: an unaligned barrier goes out at once, without
// credit, and overtakes on both sides: what the sender has not sent (saved
// by OvertakeEvent) and what the gate has not delivered (given to
// Config.Overtaken); together they are every record the consumer has not
// taken, in order, and they are delivered after the barrier.
func TestUnalignedBarrier(t *testing.T) {
	url := startServer(t)
	a, b := connect(t, url, "worker-a"), connect(t, url, "worker-b")
	ctx := testCtx(t)
	// One record per buffer: 2 exclusive credits and 8 floating buffers
	// let 10 reach the gate; the other 10 wait at the sender.
	const records = 20
	cfg := exchange.Config{BufferSize: 40, ExclusivePerChannel: 2, FloatingPerGate: 8, BuffersPerWriter: records, BufferTimeout: -1}
	var (
		mu       sync.Mutex
		received []string
	)
	overtaken := func(channel int, ev exchange.Event, frame []byte) {
		mu.Lock()
		received = append(received, fmt.Sprintf("%d:%v:%s", channel, ev, values(t, frame)))
		mu.Unlock()
	}
	e := newNetEdge(t, a, b, cfg, 1, 1, setup{receiver: Config{Overtaken: overtaken}})
	w, g := e.out.Writer(0), e.gates[0]
	val := func(i int) string { return fmt.Sprintf("v%02d", i) }
	for i := range records {
		if err := w.Emit(ctx, 0, &abi.Record{Value: []byte(val(i))}); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	held, err := g.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the gate to fill", func() bool { return g.Stats().InPoolUsage == 1 })
	var (
		sent      []string
		sentBytes int64
	)
	barrier := exchange.Barrier{Barrier: checkpoint.Barrier{ID: 9, Kind: checkpoint.KindCheckpoint}}
	n, err := w.OvertakeEvent(barrier, func(channel int, frame []byte) {
		sent = append(sent, fmt.Sprintf("%d:%s", channel, values(t, frame)))
		sentBytes += int64(len(frame))
	})
	if err != nil {
		t.Fatal(err)
	}
	// The barrier reaches the gate behind the 9 buffers queued there, and
	// goes ahead of them.
	waitFor(t, ctx, "the barrier", func() bool { return g.Stats().Queued == 10 })
	first, err := g.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if first.Event() != barrier {
		t.Fatalf("after the barrier came %v, want the barrier first", first.Event())
	}
	first.Recycle()
	var wantSent, wantReceived []string
	for i := 1; i < records; i++ {
		if i < 10 {
			wantReceived = append(wantReceived, fmt.Sprintf("0:barrier 9:%s", val(i)))
		} else {
			wantSent = append(wantSent, "0:"+val(i))
		}
	}
	if got := strings.Join(sent, " "); got != strings.Join(wantSent, " ") || n != sentBytes {
		t.Fatalf("the sender saved %q (%d bytes), want %q", got, n, wantSent)
	}
	mu.Lock()
	if got := strings.Join(received, " "); got != strings.Join(wantReceived, " ") {
		t.Fatalf("the receiver saved %q, want %q", got, wantReceived)
	}
	mu.Unlock()
	if got := values(t, held.Frame()); got != val(0) {
		t.Fatalf("held %q", got)
	}
	held.Recycle()
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	got := consume(t, ctx, g, 1)[0]
	if len(got) != records-1 {
		t.Fatalf("after the barrier came %d records, want %d", len(got), records-1)
	}
}
