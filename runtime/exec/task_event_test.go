package exec

import (
	"context"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/runtime/exchange"
	"wasmstream.io/platform/runtime/operator/optest"
)

// foreignEvent is an event kind no consumer knows. Outside exchange a type
// can satisfy exchange.Event only by embedding it, as here.
type foreignEvent struct{ exchange.Event }

// advances is a counting stage that also keeps the watermarks it is given.
type advances struct {
	optest.Count
	wms []int64
}

func (a *advances) Advance(_ context.Context, wm int64) error {
	a.wms = append(a.wms, wm)
	return nil
}

// TestGateTaskFailsOnUnhandledEvent: a gate task handles what comes before
// an event it does not handle, then fails naming the event's type instead of
// dropping it, and reads no further.
func TestGateTaskFailsOnUnhandledEvent(t *testing.T) {
	for _, tc := range []struct {
		name string
		ev   exchange.Event
		want string
	}{
		{"unknown kind", foreignEvent{exchange.Watermark{Time: 9}}, "task: input channel 0: unhandled exchange event exec.foreignEvent ({watermark 9})"},
		{"barrier without checkpoints", exchange.Barrier{Barrier: checkpoint.Barrier{ID: 4, Kind: checkpoint.KindCheckpoint}},
			"input channel 0: checkpoint barrier 4, but the job takes no checkpoints"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cfg := exchange.Config{BufferTimeout: 0}
			edge := exchange.NewEdge(cfg, 1, 1)
			sink := &advances{}
			task := &Task{name: "consumer", gate: exchange.NewGate(cfg, edge.Channels(0)), chain: sink}
			w := edge.Writer(0)
			if err := w.Emit(ctx, 0, &abi.Record{Value: []byte("a")}); err != nil {
				t.Fatal(err)
			}
			for _, ev := range []exchange.Event{exchange.Watermark{Time: 5}, tc.ev, exchange.Watermark{Time: 6}} {
				if err := w.EmitEvent(ctx, 0, ev); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Emit(ctx, 0, &abi.Record{Value: []byte("b")}); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(ctx); err != nil {
				t.Fatal(err)
			}
			err := task.runGate(ctx)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("runGate = %v, want %q", err, tc.want)
			}
			if sink.N != 1 || len(sink.wms) != 1 || sink.wms[0] != 5 {
				t.Fatalf("chain got %d records and watermarks %v, want 1 record and [5]", sink.N, sink.wms)
			}
		})
	}
}

// TestEventConsumersRejectWhatTheyDoNotHandle: event time takes no barrier
// and barrier alignment no watermark or idleness; each says so.
func TestEventConsumersRejectWhatTheyDoNotHandle(t *testing.T) {
	ctx := context.Background()
	barrier := exchange.Barrier{Barrier: checkpoint.Barrier{ID: 2, Kind: checkpoint.KindCheckpoint}}
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"event time, barrier", func() error { return (&Task{}).gateEvent(ctx, 1, barrier) },
			"event time: input channel 1: unhandled exchange event exchange.Barrier (barrier 2)"},
		{"event time, unknown", func() error { return (&Task{}).gateEvent(ctx, 0, foreignEvent{}) },
			"event time: input channel 0: unhandled exchange event exec.foreignEvent ({<nil>})"},
		{"alignment, watermark", func() error { return (&taskCheckpoint{}).gateEvent(ctx, &Task{}, 3, exchange.Watermark{Time: 7}) },
			"barrier alignment: input channel 3: unhandled exchange event exchange.Watermark (watermark 7)"},
		{"alignment, idleness", func() error { return (&taskCheckpoint{}).gateEvent(ctx, &Task{}, 0, exchange.Idle{Idle: true}) },
			"barrier alignment: input channel 0: unhandled exchange event exchange.Idle (idle)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); err == nil || err.Error() != tc.want {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}
