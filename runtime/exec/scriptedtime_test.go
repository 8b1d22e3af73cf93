package exec

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/exchange"
)

// clockSeen is a stage that notes the task's scripted clock at each record
// it gets, and the times the chain ticks with.
type clockSeen struct {
	advances
	clock func() int64
	seen  []string
	ticks []int64
}

func (c *clockSeen) Process(_ context.Context, recs []abi.Record) error {
	for _, r := range recs {
		c.seen = append(c.seen, fmt.Sprintf("%s@%d", r.Value, c.clock()))
	}
	return nil
}

func (c *clockSeen) Tick(_ context.Context, now int64) error {
	if len(c.ticks) == 0 || c.ticks[len(c.ticks)-1] != now {
		c.ticks = append(c.ticks, now)
	}
	return nil
}

// TestScriptedClockAlignment: a gate task's scripted clock moves to a time
// once every open channel has delivered it, a channel that delivered it
// first waits (so a record after the advance is never read before it), and
// a channel that ends stops holding the clock back. Whatever order the gate
// serves its channels in, every record sees the clock of its place in the
// script.
func TestScriptedClockAlignment(t *testing.T) {
	type step struct {
		rec string
		pt  int64
	}
	tests := []struct {
		name      string
		producers [][]step
		ticks     []int64
	}{
		{"two channels", [][]step{
			{{rec: "a1"}, {pt: 100}, {rec: "a2"}, {pt: 250}, {rec: "a3"}},
			{{rec: "b1"}, {pt: 100}, {rec: "b2"}, {rec: "b3"}, {pt: 250}, {rec: "b4"}},
		}, []int64{100, 250}},
		{"an ended channel does not hold the clock", [][]step{
			{{rec: "a1"}, {pt: 100}, {rec: "a2"}},
			{},
		}, []int64{100}},
		{"three channels, the first far ahead in records", [][]step{
			{{pt: 5}, {rec: "a1"}, {rec: "a2"}, {rec: "a3"}, {rec: "a4"}, {pt: 6}, {rec: "a5"}},
			{{pt: 5}, {pt: 6}, {rec: "b1"}},
			{{rec: "c1"}, {pt: 5}, {pt: 6}},
		}, []int64{5, 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			cfg := exchange.Config{BufferTimeout: 0}
			edge := exchange.NewEdge(cfg, len(tt.producers), 1)
			task := &Task{name: "consumer", gate: exchange.NewGate(cfg, edge.Channels(0))}
			task.time.scripted = &scriptedClock{}
			sink := &clockSeen{clock: task.time.scripted.read}
			task.chain = sink
			var want []string
			for p, steps := range tt.producers {
				w := edge.Writer(p)
				at := int64(0)
				for _, st := range steps {
					if st.rec == "" {
						at = st.pt
						if err := w.EmitEvent(ctx, 0, exchange.ProcessingTime{Time: st.pt}); err != nil {
							t.Fatal(err)
						}
						continue
					}
					want = append(want, fmt.Sprintf("%s@%d", st.rec, at))
					if err := w.Emit(ctx, 0, &abi.Record{Value: []byte(st.rec)}); err != nil {
						t.Fatal(err)
					}
				}
				if err := w.Close(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if err := task.runGate(ctx); err != nil {
				t.Fatal(err)
			}
			slices.Sort(sink.seen)
			slices.Sort(want)
			if !slices.Equal(sink.seen, want) {
				t.Errorf("records saw %v, want %v", sink.seen, want)
			}
			if !slices.Equal(sink.ticks, tt.ticks) {
				t.Errorf("ticks %v, want %v", sink.ticks, tt.ticks)
			}
		})
	}
}

// TestProcessingTimeWithoutScriptedClock: a task on the wall clock fails
// on a scripted time rather than ignoring it.
func TestProcessingTimeWithoutScriptedClock(t *testing.T) {
	err := (&Task{}).clockEvent(context.Background(), 2, 7, false)
	if want := "processing time: input channel 2: unhandled exchange event exchange.ProcessingTime (processing time 7)"; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}
