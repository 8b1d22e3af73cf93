package broadcast

import (
	"context"
	"encoding/binary"
	"fmt"
	"reflect"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/process"
	"wasmstream.io/platform/state"
)

// scriptedBroadcast is a process_broadcast guest that fails its frame's
// first record, puts the second's value under its timestamp and emits it,
// and notes each frame's watermark and processing time.
type scriptedBroadcast struct{ heads []abi.FrameHead }

func (g *scriptedBroadcast) Call(context.Context, int, []byte) ([]byte, error) {
	return nil, fmt.Errorf("unkeyed call")
}

func (g *scriptedBroadcast) CallWith(_ context.Context, _ int, frame []byte, env host.Env) ([]byte, error) {
	var gr abi.GroupReader
	if err := gr.Reset(frame); err != nil {
		return nil, err
	}
	g.heads = append(g.heads, gr.Head())
	var head abi.GroupHead
	var recs []abi.Record
	for gr.NextGroup(&head) {
		var r abi.Record
		for gr.NextRecord(&r) {
			recs = append(recs, r)
		}
	}
	if err := env.Enter(0); err != nil {
		return nil, err
	}
	if err := env.MapPut(0, fmt.Appendf(nil, "%d", recs[1].Timestamp), recs[1].Value); err != nil {
		return nil, err
	}
	out := binary.LittleEndian.AppendUint32(nil, 2)
	out = abi.AppendEntryError(out, 0, "bad rule")
	return abi.AppendEntryRecord(out, 1, abi.HasKey, &abi.Record{Key: []byte("ack"), Value: []byte("ok")}), nil
}

func (g *scriptedBroadcast) Close(context.Context) error { return nil }

// traceSink writes down each record with the broadcast record it answers.
type traceSink struct {
	batch   []abi.Record
	answers []*abi.Record
	lines   []string
}

func (s *traceSink) Answers(inputs []*abi.Record) { s.answers = inputs }
func (s *traceSink) Process(_ context.Context, recs []abi.Record) error {
	for i, r := range recs {
		for j := range s.batch {
			if &s.batch[j] == s.answers[i] {
				s.lines = append(s.lines, fmt.Sprintf("%s@%d %s <- input %d", r.Key, r.Timestamp, r.Value, j))
			}
		}
	}
	return nil
}
func (s *traceSink) Advance(context.Context, int64) error { return nil }
func (s *traceSink) Tick(context.Context, int64) error    { return nil }
func (s *traceSink) Finish(context.Context) error         { return nil }
func (s *traceSink) Close(context.Context) error          { return nil }

// The broadcast side's frames carry the watermark and the clock, what it
// emits reaches a Tracer with the record it answers, a record it fails
// goes to the error policy, and what it wrote is in the store.
func TestBroadcastSeams(t *testing.T) {
	keyed, err := state.Open(state.Config{MaxParallelism: 128, Range: state.RangeOf(128, 1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	sink := &traceSink{batch: []abi.Record{{Value: []byte("x"), Timestamp: 5}, {Value: []byte("y"), Timestamp: 6}}}
	policy := &operator.ErrorPolicy{Mode: operator.OnErrorFail, Vertex: "op", Counts: &operator.ErrorCounts{},
		Report: func(_ context.Context, rec *abi.Record, cause error) error {
			sink.lines = append(sink.lines, fmt.Sprintf("%s failed: %v", rec.Value, cause))
			return nil
		}}
	guest := &scriptedBroadcast{}
	store := NewStore([]abi.State{{Name: "rules", Kind: abi.StateMap, Broadcast: true}}, 0)
	proc := process.New("op", operator.GroupCall{Module: "m", Function: "p", Guest: guest}, nil, keyed, 16, policy, sink)
	in := &operator.Inputs{Split: 1}
	op := New(Config{Vertex: "op", Store: store, Keyed: proc, Broadcast: operator.GroupCall{Module: "m", Function: "b", Fn: 1, Guest: guest},
		Inputs: in, BatchSize: 16, Policy: policy, Next: sink})
	t.Cleanup(func() { _ = op.Close(context.Background()) })
	op.Clock = func() int64 { return 42 }
	ctx := context.Background()
	if err := op.Advance(ctx, 3); err != nil {
		t.Fatal(err)
	}
	in.From(1)
	if err := op.Process(ctx, sink.batch); err != nil {
		t.Fatal(err)
	}
	want := []string{"ack@6 ok <- input 1", "x failed: udf[m] function[b]: bad rule"}
	if !reflect.DeepEqual(sink.lines, want) {
		t.Fatalf("got %q, want %q", sink.lines, want)
	}
	if len(guest.heads) != 1 || guest.heads[0].Watermark != 3 || guest.heads[0].ProcessingTime != 42 || guest.heads[0].Groups != 1 {
		t.Fatalf("frame heads %+v", guest.heads)
	}
	if v, ok := store.Get(0, []byte("6")); !ok || string(v) != "y" {
		t.Fatalf("store: %q %v", v, ok)
	}
}
