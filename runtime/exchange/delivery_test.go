package exchange

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/checkpoint"
)

func TestExactDelivery(t *testing.T) {
	const records = 3000
	for _, tc := range []struct {
		name                string
		producers, consumer int
		cfg                 Config
		// batch > 0 emits with EmitBatch, batch records at a time.
		batch int
	}{
		{"1x1", 1, 1, Config{BufferSize: 128, BufferTimeout: -1}, 0},
		{"2x3", 2, 3, Config{BufferSize: 256, BufferTimeout: -1}, 0},
		{"4x1", 4, 1, Config{BufferSize: 512, BufferTimeout: -1}, 0},
		{"2x3 tight credits", 2, 3, Config{BufferSize: 64, ExclusivePerChannel: 1, FloatingPerGate: 1, BuffersPerWriter: 3, BufferTimeout: -1}, 0},
		{"4x1 flush every record", 4, 1, Config{BufferTimeout: 0}, 0},
		{"2x3 timeout", 2, 3, Config{BufferSize: 1024, BufferTimeout: time.Millisecond}, 0},
		{"2x3 timeout batches", 2, 3, Config{BufferSize: 1024, BufferTimeout: time.Millisecond}, 64},
		{"1x1 batches", 1, 1, Config{BufferSize: 128, BufferTimeout: -1}, 7},
	} {
		for _, remote := range []bool{false, true} {
			t.Run(tc.name+via(remote), func(t *testing.T) {
				part := NewKeyGroups(128, tc.consumer)
				want := expect(tc.producers, tc.consumer)
				for p := range tc.producers {
					for seq := range records {
						r := record(p, seq, seq%40)
						c := part.Channel(&r)
						want[c][p] = append(want[c][p], describe(&r))
					}
				}
				got := runEdgeVia(t, tc.cfg, tc.producers, tc.consumer, remote, func(ctx context.Context, w *Writer, p int) error {
					var batch []abi.Record
					for seq := range records {
						r := record(p, seq, seq%40)
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
}

// via names the way a test's channels go: in-process, or through an
// outbox and an inbox.
func via(remote bool) string {
	if remote {
		return " remote"
	}
	return ""
}

func TestEventsInOrder(t *testing.T) {
	const records, every = 500, 7
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"full buffers", Config{BufferSize: 256, BufferTimeout: -1}},
		{"flush every record", Config{BufferTimeout: 0}},
		{"timeout", Config{BufferSize: 256, BufferTimeout: time.Millisecond}},
		{"tight credits", Config{BufferSize: 64, ExclusivePerChannel: 1, FloatingPerGate: 1, BuffersPerWriter: 2, BufferTimeout: -1}},
	} {
		for _, remote := range []bool{false, true} {
			t.Run(tc.name+via(remote), func(t *testing.T) {
				const producers, consumers = 2, 2
				want := expect(producers, consumers)
				for p := range producers {
					part := NewRebalance(consumers, p)
					for seq := range records {
						r := record(p, seq, 16)
						c := part.Channel(&r)
						want[c][p] = append(want[c][p], describe(&r))
						if seq%every == every-1 {
							for c := range consumers {
								want[c][p] = append(want[c][p], fmt.Sprintf("event watermark %d", seq))
							}
						}
					}
				}
				got := runEdgeVia(t, tc.cfg, producers, consumers, remote, func(ctx context.Context, w *Writer, p int) error {
					part := NewRebalance(consumers, p)
					for seq := range records {
						r := record(p, seq, 16)
						if err := w.Emit(ctx, part.Channel(&r), &r); err != nil {
							return err
						}
						if seq%every == every-1 {
							if err := w.BroadcastEvent(ctx, Watermark{Time: int64(seq)}); err != nil {
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
}

// TestEventKinds: every kind of event reaches the consumer as it was sent,
// its fields intact, and a buffer of records has no event; the unaligned
// barrier overtakes the rest.
func TestEventKinds(t *testing.T) {
	ctx := context.Background()
	e := NewEdge(Config{BufferTimeout: -1}, 1, 1)
	g := NewGate(Config{}, e.Channels(0))
	w := e.Writer(0)
	aligned := Barrier{checkpoint.Barrier{ID: 3, Kind: checkpoint.KindSavepoint, Stop: true}}
	unaligned := Barrier{checkpoint.Barrier{ID: 4, Kind: checkpoint.KindCheckpoint}}
	emitValue(t, w, 0, "a")
	for _, ev := range []Event{Watermark{Time: -5}, Idle{Idle: true}, Idle{}, aligned} {
		if err := w.EmitEvent(ctx, 0, ev); err != nil {
			t.Fatal(err)
		}
	}
	var saved []string
	if _, err := w.OvertakeEvent(unaligned, saver(t, &saved)); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(saved) != "[0:a]" {
		t.Fatalf("overtook %q, want [0:a]", saved)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	want := []Event{unaligned, nil, Watermark{Time: -5}, Idle{Idle: true}, Idle{}, aligned, EndOfPartition{}}
	bs := available(t, g)
	if len(bs) != len(want) {
		t.Fatalf("got %d buffers, want %d", len(bs), len(want))
	}
	for i, b := range bs {
		if got := b.Event(); got != want[i] {
			t.Errorf("buffer %d: event %#v, want %#v", i, got, want[i])
		}
		if (b.Frame() == nil) != (want[i] != nil) {
			t.Errorf("buffer %d: frame %v with event %v", i, b.Frame(), want[i])
		}
		b.Recycle()
	}
}

func TestEmitEventFlushesItsChannelOnly(t *testing.T) {
	e := NewEdge(Config{BufferTimeout: -1}, 1, 2)
	g0, g1 := NewGate(Config{}, e.Channels(0)), NewGate(Config{}, e.Channels(1))
	w := e.Writer(0)
	emitValue(t, w, 0, "a")
	emitValue(t, w, 1, "b")
	if err := w.EmitEvent(context.Background(), 0, Watermark{Time: 5}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		g    *Gate
		want []string
	}{{g0, []string{"0:a", "0:event watermark 5"}}, {g1, nil}} {
		if got := availableDescribed(t, tc.g); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

func TestEndOfPartition(t *testing.T) {
	ctx := context.Background()
	e := NewEdge(Config{}, 2, 1)
	g := NewGate(Config{}, e.Channels(0))
	emitValue(t, e.Writer(1), 0, "x")
	for p := range 2 {
		if err := e.Writer(p).Close(ctx); err != nil {
			t.Fatalf("Close %d: %v", p, err)
		}
	}
	if got, want := fmt.Sprint(availableDescribed(t, g)), "[1:x 0:event end of partition 1:event end of partition]"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	for range 2 {
		if b, err := g.Next(ctx); b != nil || err != io.EOF {
			t.Fatalf("Next after the end = %v, %v; want nil, io.EOF", b, err)
		}
	}
	w := e.Writer(0)
	for name, err := range map[string]error{
		"Emit":           w.Emit(ctx, 0, &abi.Record{}),
		"EmitEvent":      w.EmitEvent(ctx, 0, Watermark{Time: 1}),
		"BroadcastEvent": w.BroadcastEvent(ctx, Watermark{Time: 1}),
		"Close":          w.Close(ctx),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
}

func TestGateWithoutChannelsEnds(t *testing.T) {
	g := NewGate(Config{})
	if b, err := g.Next(context.Background()); b != nil || err != io.EOF {
		t.Fatalf("Next = %v, %v; want nil, io.EOF", b, err)
	}
}

func TestTwoEdgesOneGate(t *testing.T) {
	left, right := NewEdge(Config{BufferTimeout: 0}, 1, 1), NewEdge(Config{BufferTimeout: 0}, 2, 1)
	g := NewGate(Config{}, left.Channels(0), right.Channels(0))
	if g.NumChannels() != 3 {
		t.Fatalf("NumChannels = %d, want 3", g.NumChannels())
	}
	emitValue(t, right.Writer(1), 0, "r1")
	emitValue(t, left.Writer(0), 0, "l0")
	emitValue(t, right.Writer(0), 0, "r0")
	if got, want := fmt.Sprint(availableDescribed(t, g)), "[2:r1 0:l0 1:r0]"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
