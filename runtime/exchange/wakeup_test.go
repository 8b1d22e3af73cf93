package exchange

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"wasmstream.io/platform/abi"
)

func TestGateWakeup(t *testing.T) {
	e := NewEdge(Config{}, 1, 1)
	g := NewGate(Config{}, e.Channels(0))
	w := e.Writer(0)
	ctx := context.Background()

	// Woken before it waits: the next Next that finds nothing returns
	// ErrWoken, once.
	g.Wakeup()
	if _, err := g.Next(ctx); !errors.Is(err, ErrWoken) {
		t.Fatalf("Next after Wakeup: %v, want ErrWoken", err)
	}
	if _, err := g.Next(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("second Next: %v, want the context's error", err)
	}

	// A ready buffer is served before the wakeup.
	rec := abi.Record{Value: []byte("v")}
	if err := w.Emit(ctx, 0, &rec); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	g.Wakeup()
	b, err := g.Next(ctx)
	if err != nil || b.Event() != nil {
		t.Fatalf("Next with a buffer ready: %v, %v", b, err)
	}
	b.Recycle()
	if _, err := g.Next(ctx); !errors.Is(err, ErrWoken) {
		t.Fatalf("Next after the buffer: %v, want ErrWoken", err)
	}

	// Woken while waiting.
	done := make(chan error, 1)
	go func() {
		_, err := g.Next(ctx)
		done <- err
	}()
	for {
		g.mu.Lock()
		waiting := g.waiting
		g.mu.Unlock()
		if waiting {
			break
		}
		runtime.Gosched()
	}
	g.Wakeup()
	if err := <-done; !errors.Is(err, ErrWoken) {
		t.Fatalf("waiting Next: %v, want ErrWoken", err)
	}
	if allocs := testing.AllocsPerRun(100, g.Wakeup); allocs != 0 {
		t.Fatalf("Wakeup allocates %v times", allocs)
	}
}
