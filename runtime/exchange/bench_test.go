package exchange

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
)

// benchEdge moves b.N records of an 8-byte key and a 16-byte value from
// producers to consumers, spread round robin, one Emit per record or, with
// batch > 0, one EmitBatch per batch records.
func benchEdge(b *testing.B, producers, consumers int, timeout time.Duration, batch int) {
	ctx := context.Background()
	e := NewEdge(Config{BufferTimeout: timeout}, producers, consumers)
	var consumed sync.WaitGroup
	counts := make([]int, consumers)
	for c := range consumers {
		g := NewGate(Config{}, e.Channels(c))
		consumed.Go(func() {
			var rec abi.Record
			for {
				buf, err := g.Next(ctx)
				if errors.Is(err, io.EOF) {
					return
				}
				if err != nil {
					b.Error(err)
					return
				}
				for buf.Next(&rec) {
					counts[c]++
				}
				buf.Recycle()
			}
		})
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var produced sync.WaitGroup
	for p := range producers {
		n := b.N / producers
		if p == 0 {
			n += b.N % producers
		}
		produced.Go(func() {
			w := e.Writer(p)
			part := NewRebalance(consumers, p)
			if err := produce(ctx, w, part, n, batch); err != nil {
				b.Error(err)
			}
			if err := w.Close(ctx); err != nil {
				b.Error(err)
			}
		})
	}
	produced.Wait()
	consumed.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	total := 0
	for _, n := range counts {
		total += n
	}
	if total != b.N {
		b.Fatalf("consumed %d records, want %d", total, b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "records/s")
}

// produce emits n records, the key counting.
func produce(ctx context.Context, w *Writer, part Partitioner, n, batch int) error {
	if batch == 0 {
		var key [8]byte
		rec := abi.Record{Key: key[:], Value: make([]byte, 16)}
		for i := range n {
			binary.LittleEndian.PutUint64(key[:], uint64(i))
			if err := w.Emit(ctx, part.Channel(&rec), &rec); err != nil {
				return err
			}
		}
		return nil
	}
	keys := make([]byte, 8*batch)
	recs := make([]abi.Record, batch)
	for i := range recs {
		recs[i] = abi.Record{Key: keys[8*i : 8*i+8], Value: make([]byte, 16)}
	}
	for i := 0; i < n; i += batch {
		m := min(batch, n-i)
		for j := range m {
			binary.LittleEndian.PutUint64(recs[j].Key, uint64(i+j))
		}
		if err := w.EmitBatch(ctx, part, recs[:m]); err != nil {
			return err
		}
	}
	return nil
}

func benchModes(b *testing.B, producers, consumers int) {
	for _, m := range []struct {
		name    string
		timeout time.Duration
		batch   int
	}{
		{"timeout=-1", -1, 0},
		{"timeout=1ms", time.Millisecond, 0},
		{"timeout=1ms/batch=256", time.Millisecond, 256},
	} {
		b.Run(m.name, func(b *testing.B) { benchEdge(b, producers, consumers, m.timeout, m.batch) })
	}
}

func BenchmarkEdge1x1(b *testing.B) { benchModes(b, 1, 1) }

func BenchmarkEdge2x2(b *testing.B) { benchModes(b, 2, 2) }
