package exchange

import (
	"context"
	"errors"
	"testing"

	"wasmstream.io/platform/abi"
)

func TestSpanningRecords(t *testing.T) {
	sizes := []int{0, 1, 30, 33, 34, 100, 1000, 5000, 3, 64, 200, 17}
	const records = 60
	gen := func(p, seq int) abi.Record {
		r := record(p, seq, sizes[seq%len(sizes)])
		if seq%2 == 1 {
			r.Headers = []abi.Header{{Name: []byte("h"), Value: []byte("v")}, {Name: []byte("trace"), Value: r.Key}}
		}
		return r
	}
	for _, tc := range []struct {
		name      string
		producers int
		cfg       Config
	}{
		{"1x1", 1, Config{BufferSize: 64, BufferTimeout: -1}},
		{"one buffer and one credit", 1, Config{BufferSize: 64, ExclusivePerChannel: 1, FloatingPerGate: 1, BuffersPerWriter: 1, BufferTimeout: -1}},
		{"3x1 interleaved", 3, Config{BufferSize: 64, BufferTimeout: 0}},
		{"3x1 timeout", 3, Config{BufferSize: 128, BufferTimeout: 1}},
	} {
		for _, remote := range []bool{false, true} {
			t.Run(tc.name+via(remote), func(t *testing.T) {
				want := expect(tc.producers, 1)
				for p := range tc.producers {
					for seq := range records {
						r := gen(p, seq)
						want[0][p] = append(want[0][p], describe(&r))
					}
				}
				got := runEdgeVia(t, tc.cfg, tc.producers, 1, remote, func(ctx context.Context, w *Writer, p int) error {
					for seq := range records {
						r := gen(p, seq)
						if err := w.Emit(ctx, 0, &r); err != nil {
							return err
						}
					}
					return nil
				})
				compare(t, got, want)
			})
		}
	}
}

// A record either fits a buffer with the frame header or travels as
// fragments; either way the consumer gets an abi input frame.
func TestSpanBoundary(t *testing.T) {
	for _, tc := range []struct {
		name     string
		value    int
		buffers  int64
		bytes    int64
		frameLen int
	}{
		{"fills a buffer", 32, 1, 64, 64},
		{"one fragment", 33, 1, 61, 65},
		{"two fragments", 37, 2, 65, 69},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{BufferSize: 64, BufferTimeout: -1}
			e := NewEdge(cfg, 1, 1)
			g := NewGate(cfg, e.Channels(0))
			w := e.Writer(0)
			r := abi.Record{Key: []byte("12345678"), Value: make([]byte, tc.value)}
			if err := w.Emit(context.Background(), 0, &r); err != nil {
				t.Fatal(err)
			}
			w.Flush()
			if s := w.Stats(); s.BuffersSent != tc.buffers || s.BytesSent != tc.bytes {
				t.Fatalf("sent %d buffers of %d bytes, want %d of %d", s.BuffersSent, s.BytesSent, tc.buffers, tc.bytes)
			}
			bs := available(t, g)
			if len(bs) != 1 {
				t.Fatalf("got %d buffers, want 1", len(bs))
			}
			frame := bs[0].Frame()
			if len(frame) != tc.frameLen {
				t.Fatalf("frame of %d bytes, want %d", len(frame), tc.frameLen)
			}
			ir, err := abi.NewInputReader(frame)
			if err != nil {
				t.Fatal(err)
			}
			var got abi.Record
			if !ir.Next(&got) || describe(&got) != describe(&r) || ir.Next(&got) || ir.Err() != nil {
				t.Fatalf("frame does not hold exactly the record: %v", ir.Err())
			}
			bs[0].Recycle()
		})
	}
}

func TestMaxRecordSize(t *testing.T) {
	cfg := Config{BufferSize: 64, MaxRecordSize: 100, BufferTimeout: -1}
	e := NewEdge(cfg, 1, 1)
	NewGate(cfg, e.Channels(0))
	w := e.Writer(0)
	ctx := context.Background()
	atLimit := abi.Record{Value: make([]byte, 100-20)}
	if atLimit.Size() != 100 {
		t.Fatalf("record size %d, want 100", atLimit.Size())
	}
	if err := w.Emit(ctx, 0, &atLimit); err != nil {
		t.Fatalf("record at the limit: %v", err)
	}
	over := abi.Record{Value: make([]byte, 101-20)}
	err := w.Emit(ctx, 0, &over)
	if !errors.Is(err, ErrRecordTooLarge) || err.Error() != "exchange: record too large: 101 bytes, the limit is 100" {
		t.Fatalf("record over the limit: %v", err)
	}
	if err := w.Emit(ctx, 0, &atLimit); err != nil {
		t.Fatalf("after a refused record: %v", err)
	}
}
