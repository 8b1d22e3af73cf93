package exchange

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"sync"
	"testing"

	"wasmstream.io/platform/abi"
)

// cancelled makes Next, Emit and the like return at once instead of
// waiting, which lets tests observe exactly what is available.
var cancelled = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// record is the seq-th record of producer p: its key names both, its
// timestamp packs both, its value has size bytes.
func record(p, seq, size int) abi.Record {
	v := make([]byte, size)
	for i := range v {
		v[i] = byte(seq + i)
	}
	return abi.Record{Key: fmt.Appendf(nil, "key-%d-%d", p, seq), Value: v, Timestamp: int64(p)<<32 | int64(seq)}
}

// describe names a record by its content.
func describe(r *abi.Record) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s/%d/%08x/%d", r.Key, len(r.Value), crc32.ChecksumIEEE(r.Value), r.Timestamp)
	for _, h := range r.Headers {
		fmt.Fprintf(&sb, "/%s=%s", h.Name, h.Value)
	}
	return sb.String()
}

// describeBuffer names a buffer: its channel, then its event or records.
func describeBuffer(b *Buffer) string {
	if ev := b.Event(); ev != nil {
		return fmt.Sprintf("%d:event %v", b.Channel(), ev)
	}
	var recs []string
	var rec abi.Record
	for b.Next(&rec) {
		recs = append(recs, string(rec.Value))
	}
	return fmt.Sprintf("%d:%s", b.Channel(), strings.Join(recs, ","))
}

// available takes every buffer Next returns without waiting.
func available(t *testing.T, g *Gate) []*Buffer {
	t.Helper()
	var bs []*Buffer
	for {
		b, err := g.Next(cancelled)
		if err != nil {
			if !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
				t.Fatalf("Next: %v", err)
			}
			return bs
		}
		bs = append(bs, b)
	}
}

// availableDescribed is available, described and recycled.
func availableDescribed(t *testing.T, g *Gate) []string {
	t.Helper()
	var ds []string
	for _, b := range available(t, g) {
		ds = append(ds, describeBuffer(b))
		b.Recycle()
	}
	return ds
}

// emitValue emits a record whose value is s.
func emitValue(t *testing.T, w *Writer, channel int, s string) {
	t.Helper()
	if err := w.Emit(context.Background(), channel, &abi.Record{Value: []byte(s)}); err != nil {
		t.Fatalf("Emit %q: %v", s, err)
	}
}

// runEdgeVia runs producers and one consumer goroutine per gate over an edge
// and returns, per consumer and channel, what arrived: records described,
// and events as "event <v>". EndOfPartition must come last on each channel
// and is left out. With remote, the writers and the gates are of two edges,
// and every channel between them goes through an outbox and an inbox
// (pipe).
func runEdgeVia(t *testing.T, cfg Config, producers, consumers int, remote bool, produce func(ctx context.Context, w *Writer, p int) error) [][][]string {
	t.Helper()
	ctx := context.Background()
	e := NewEdge(cfg, producers, consumers)
	in := e
	if remote {
		in = NewEdge(cfg, producers, consumers)
	}
	gates := make([]*Gate, consumers)
	for c := range gates {
		gates[c] = NewGate(cfg, in.Channels(c))
	}
	if remote {
		stop := pipeEdge(t, e, in, producers, consumers, nil)
		defer stop()
	}
	got := make([][][]string, consumers)
	var wg sync.WaitGroup
	for c := range consumers {
		g := gates[c]
		got[c] = make([][]string, producers)
		wg.Go(func() {
			ended := make([]bool, producers)
			var rec abi.Record
			for {
				b, err := g.Next(ctx)
				if errors.Is(err, io.EOF) {
					return
				}
				if err != nil {
					t.Errorf("consumer %d: %v", c, err)
					return
				}
				ch := b.Channel()
				if ended[ch] {
					t.Errorf("consumer %d channel %d: buffer after EndOfPartition", c, ch)
				}
				switch ev := b.Event(); ev {
				case nil:
					for b.Next(&rec) {
						got[c][ch] = append(got[c][ch], describe(&rec))
					}
				case EndOfPartition{}:
					ended[ch] = true
				default:
					got[c][ch] = append(got[c][ch], fmt.Sprintf("event %v", ev))
				}
				b.Recycle()
			}
		})
	}
	for p := range producers {
		wg.Go(func() {
			w := e.Writer(p)
			if err := produce(ctx, w, p); err != nil {
				t.Errorf("producer %d: %v", p, err)
			}
			if err := w.Close(ctx); err != nil {
				t.Errorf("producer %d: Close: %v", p, err)
			}
		})
	}
	wg.Wait()
	return got
}

// compare reports the first difference between per-channel sequences.
func compare(t *testing.T, got, want [][][]string) {
	t.Helper()
	for c := range want {
		for p := range want[c] {
			g, w := got[c][p], want[c][p]
			for i := 0; i < len(g) || i < len(w); i++ {
				switch {
				case i >= len(g):
					t.Fatalf("consumer %d channel %d: missing item %d %q (got %d items, want %d)", c, p, i, w[i], len(g), len(w))
				case i >= len(w):
					t.Fatalf("consumer %d channel %d: extra item %d %q", c, p, i, g[i])
				case g[i] != w[i]:
					t.Fatalf("consumer %d channel %d item %d: got %q, want %q", c, p, i, g[i], w[i])
				}
			}
		}
	}
}

// expect makes an empty [consumer][channel] table.
func expect(producers, consumers int) [][][]string {
	want := make([][][]string, consumers)
	for c := range want {
		want[c] = make([][]string, producers)
	}
	return want
}
