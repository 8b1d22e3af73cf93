package exchange

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"testing"

	"wasmstream.io/platform/abi"
)

// isWaiting reports whether a wait is in progress.
func (c *waitClock) isWaiting() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waiting
}

// waitUntil yields until cond holds.
func waitUntil(cond func() bool) {
	for !cond() {
		runtime.Gosched()
	}
}

// fixedRecord is 44 bytes encoded: an 8-byte key and a 16-byte value
// holding seq.
func fixedRecord(seq int) *abi.Record {
	r := &abi.Record{Key: make([]byte, 8), Value: make([]byte, 16)}
	binary.LittleEndian.PutUint64(r.Value, uint64(seq))
	return r
}

func TestBackpressureBound(t *testing.T) {
	ctx := context.Background()
	cfg := Config{BufferSize: 256, ExclusivePerChannel: 2, FloatingPerGate: 1, BuffersPerWriter: 4, BufferTimeout: -1}
	e := NewEdge(cfg, 1, 1)
	g := NewGate(cfg, e.Channels(0))
	w := e.Writer(0)
	const recSize, perBuffer, total = 44, 5, 2000
	if got := fixedRecord(0).Size(); got != recSize {
		t.Fatalf("record size %d, want %d", got, recSize)
	}

	// Nobody reads: the writer takes records until its pool is spent.
	accepted := 0
	for {
		err := w.Emit(cancelled, 0, fixedRecord(accepted))
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Emit: %v", err)
			}
			break
		}
		accepted++
	}
	if want := cfg.BuffersPerWriter * perBuffer; accepted != want {
		t.Fatalf("accepted %d records before blocking, want %d", accepted, want)
	}
	if bytes, bound := accepted*recSize, cfg.BuffersPerWriter*cfg.BufferSize; bytes > bound {
		t.Fatalf("%d bytes in flight, bound %d", bytes, bound)
	}
	wantW := WriterStats{BuffersSent: 4, BytesSent: 4 * (frameHeader + perBuffer*recSize), OutPoolUsage: 1}
	if got := w.Stats(); got.BuffersSent != wantW.BuffersSent || got.BytesSent != wantW.BytesSent || got.OutPoolUsage != wantW.OutPoolUsage {
		t.Fatalf("writer stats %+v, want %+v", got, wantW)
	}
	// Two buffers hold exclusive credits, one the floating buffer, and one
	// waits in the backlog.
	wantG := GateStats{InPoolUsage: 1, ExclusiveInUse: 2, FloatingInUse: 1, Queued: 3}
	if got := g.Stats(); got != wantG {
		t.Fatalf("gate stats %+v, want %+v", got, wantG)
	}

	// The writer blocks on the next record and resumes once the consumer
	// reads.
	done := make(chan error, 1)
	go func() {
		for seq := accepted; seq < total; seq++ {
			if err := w.Emit(ctx, 0, fixedRecord(seq)); err != nil {
				done <- err
				return
			}
		}
		done <- w.Close(ctx)
	}()
	waitUntil(w.blocked.isWaiting)
	next := 0
	var rec abi.Record
	for {
		b, err := g.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for b.Next(&rec) {
			if seq := int(binary.LittleEndian.Uint64(rec.Value)); seq != next {
				t.Fatalf("record %d arrived as number %d", seq, next)
			}
			next++
		}
		b.Recycle()
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if next != total {
		t.Fatalf("got %d records, want %d", next, total)
	}
	if s := w.Stats(); s.BackpressuredNanos <= 0 || s.OutPoolUsage != 0 {
		t.Fatalf("writer stats %+v, want BackpressuredNanos > 0 and OutPoolUsage 0", s)
	}
	if s := g.Stats(); s.InPoolUsage != 0 || s.ExclusiveInUse != 0 || s.FloatingInUse != 0 || s.Queued != 0 {
		t.Fatalf("gate stats %+v, want nothing in use", s)
	}
}

// taken are buffers taken from a gate and not yet recycled, by description.
type taken map[string]*Buffer

func (tk taken) take(t *testing.T, g *Gate) []string {
	t.Helper()
	var ds []string
	for _, b := range available(t, g) {
		d := describeBuffer(b)
		tk[d] = b
		ds = append(ds, d)
	}
	return ds
}

func (tk taken) recycle(t *testing.T, d string) {
	t.Helper()
	b, ok := tk[d]
	if !ok {
		t.Fatalf("buffer %s was not taken", d)
	}
	b.Recycle()
	delete(tk, d)
}

func TestFloatingBuffersGoToBacklog(t *testing.T) {
	cfg := Config{ExclusivePerChannel: 1, FloatingPerGate: 1, BufferTimeout: 0}
	e := NewEdge(cfg, 3, 1)
	g := NewGate(cfg, e.Channels(0))
	for p, values := range [][]string{{"a0", "a1"}, {"b0", "b1"}, {"c0", "c1", "c2"}} {
		for _, v := range values {
			emitValue(t, e.Writer(p), 0, v)
		}
	}
	tk := taken{}
	for _, step := range []struct {
		recycle string
		want    []string
		stats   GateStats
	}{
		// a1 took the floating buffer while it was free; b1 and c1, c2
		// wait.
		{"", []string{"0:a0", "1:b0", "2:c0", "0:a1"}, GateStats{InPoolUsage: 1, ExclusiveInUse: 3, FloatingInUse: 1}},
		// The floating buffer goes to the largest backlog, C's.
		{"0:a1", []string{"2:c1"}, GateStats{InPoolUsage: 1, ExclusiveInUse: 3, FloatingInUse: 1}},
		// B and C now have one each: the lower index wins.
		{"2:c1", []string{"1:b1"}, GateStats{InPoolUsage: 1, ExclusiveInUse: 3, FloatingInUse: 1}},
		// B's exclusive credit has nothing to send.
		{"1:b0", nil, GateStats{InPoolUsage: 0.75, ExclusiveInUse: 2, FloatingInUse: 1}},
		{"1:b1", []string{"2:c2"}, GateStats{InPoolUsage: 0.75, ExclusiveInUse: 2, FloatingInUse: 1}},
		// C's exclusive credit returns; the floating buffer stays free.
		{"2:c0", nil, GateStats{InPoolUsage: 0.5, ExclusiveInUse: 1, FloatingInUse: 1}},
		{"2:c2", nil, GateStats{InPoolUsage: 0.25, ExclusiveInUse: 1}},
		{"0:a0", nil, GateStats{}},
	} {
		if step.recycle != "" {
			tk.recycle(t, step.recycle)
		}
		if got := tk.take(t, g); fmt.Sprint(got) != fmt.Sprint(step.want) {
			t.Fatalf("after recycling %q: took %q, want %q", step.recycle, got, step.want)
		}
		got := g.Stats()
		got.IdleNanos = 0 // waiting for nothing in available
		if got != step.stats {
			t.Fatalf("after recycling %q: stats %+v, want %+v", step.recycle, got, step.stats)
		}
	}
}

func TestBlockUnblock(t *testing.T) {
	ctx := context.Background()
	e := NewEdge(Config{BufferTimeout: 0}, 2, 1)
	g := NewGate(Config{}, e.Channels(0))
	a, b := e.Writer(0), e.Writer(1)

	g.Block(0)
	emitValue(t, a, 0, "a0")
	emitValue(t, b, 0, "b0")
	emitValue(t, a, 0, "a1")
	if got, want := fmt.Sprint(availableDescribed(t, g)), "[1:b0]"; got != want {
		t.Fatalf("while blocked: got %s, want %s", got, want)
	}
	if got := g.Stats(); got.Queued != 2 || got.ExclusiveInUse != 2 {
		t.Fatalf("while blocked: stats %+v, want 2 queued holding 2 exclusive credits", got)
	}
	g.Unblock(0)
	if got, want := fmt.Sprint(availableDescribed(t, g)), "[0:a0 0:a1]"; got != want {
		t.Fatalf("after Unblock: got %s, want %s", got, want)
	}

	// Unblock wakes a Next that waits.
	g.Block(1)
	emitValue(t, b, 0, "b1")
	got := make(chan string, 1)
	go func() {
		buf, err := g.Next(ctx)
		if err != nil {
			got <- err.Error()
			return
		}
		got <- describeBuffer(buf)
		buf.Recycle()
	}()
	waitUntil(g.idle.isWaiting)
	g.Unblock(1)
	if d := <-got; d != "1:b1" {
		t.Fatalf("woken Next got %s, want 1:b1", d)
	}
}

func TestCancelUnblocks(t *testing.T) {
	cfg := Config{BuffersPerWriter: 1, BufferTimeout: 0}
	for _, tc := range []struct {
		name string
		call func(ctx context.Context, w *Writer, g *Gate) error
	}{
		{"Emit", func(ctx context.Context, w *Writer, _ *Gate) error { return w.Emit(ctx, 0, fixedRecord(1)) }},
		{"EmitEvent", func(ctx context.Context, w *Writer, _ *Gate) error { return w.EmitEvent(ctx, 0, Watermark{Time: 1}) }},
		{"BroadcastEvent", func(ctx context.Context, w *Writer, _ *Gate) error { return w.BroadcastEvent(ctx, Watermark{Time: 1}) }},
		{"Close", func(ctx context.Context, w *Writer, _ *Gate) error { return w.Close(ctx) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEdge(cfg, 1, 1)
			g := NewGate(cfg, e.Channels(0))
			w := e.Writer(0)
			// The only buffer is sent and never read.
			if err := w.Emit(context.Background(), 0, fixedRecord(0)); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- tc.call(ctx, w, g) }()
			waitUntil(w.blocked.isWaiting)
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want context.Canceled", err)
			}
		})
	}
	t.Run("Next", func(t *testing.T) {
		e := NewEdge(cfg, 1, 1)
		g := NewGate(cfg, e.Channels(0))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := g.Next(ctx)
			done <- err
		}()
		waitUntil(g.idle.isWaiting)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
		if g.Stats().IdleNanos <= 0 {
			t.Fatalf("IdleNanos %d, want > 0", g.Stats().IdleNanos)
		}
	})
}

// TestDrainedAndFreed: a writer is drained once every buffer it sent is
// back in its pool, and Freed signals each return, so that a producer can
// wait for its output to be taken without blocking in Emit.
func TestDrainedAndFreed(t *testing.T) {
	cfg := Config{BufferSize: 256, ExclusivePerChannel: 2, FloatingPerGate: 1, BuffersPerWriter: 4, BufferTimeout: -1}
	e := NewEdge(cfg, 1, 2)
	gates := []*Gate{NewGate(cfg, e.Channels(0)), NewGate(cfg, e.Channels(1))}
	w := e.Writer(0)
	if !w.Drained() {
		t.Fatal("a new writer is not drained")
	}
	for seq := range 12 {
		if err := w.Emit(cancelled, seq%2, fixedRecord(seq)); err != nil {
			t.Fatal(err)
		}
	}
	if w.Drained() {
		t.Fatal("drained with partial buffers")
	}
	w.Flush()
	select {
	case <-w.Freed():
		t.Fatal("freed before any buffer came back")
	default:
	}
	var bs []*Buffer
	for _, g := range gates {
		bs = append(bs, available(t, g)...)
	}
	if len(bs) != 4 {
		t.Fatalf("%d buffers sent, want 4", len(bs))
	}
	for i, b := range bs {
		if w.Drained() {
			t.Fatalf("drained with %d buffers still taken", len(bs)-i)
		}
		b.Recycle()
		select {
		case <-w.Freed():
		default:
			t.Fatalf("no signal for recycled buffer %d", i)
		}
	}
	if !w.Drained() {
		t.Fatal("not drained after every buffer came back")
	}
}
