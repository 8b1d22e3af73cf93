package process

import (
	"context"
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/state"
	"wasmstream.io/platform/watermark"
)

// scriptedGuest is a keyed caller whose process function (fn 0) fails its
// frame's first record, registers an event-time timer at 100 for the first
// group and emits the second record, and whose on_timer function (fn 1)
// emits a record per timer; it notes each frame's processing time.
type scriptedGuest struct{ times []int64 }

func (g *scriptedGuest) Call(context.Context, int, []byte) ([]byte, error) {
	return nil, fmt.Errorf("unkeyed call")
}

func (g *scriptedGuest) CallWith(_ context.Context, fn int, frame []byte, env host.Env) ([]byte, error) {
	var gr abi.GroupReader
	if err := gr.Reset(frame); err != nil {
		return nil, err
	}
	g.times = append(g.times, gr.Head().ProcessingTime)
	if fn == 1 {
		out := binary.LittleEndian.AppendUint32(nil, gr.Head().Groups)
		for i := range gr.Head().Groups {
			out = abi.AppendEntryRecord(out, i, 0, &abi.Record{Value: []byte("fired")})
		}
		return out, nil
	}
	if err := env.Enter(0); err != nil {
		return nil, err
	}
	if err := env.RegisterTimer(abi.EventTime, 100); err != nil {
		return nil, err
	}
	out := binary.LittleEndian.AppendUint32(nil, 2)
	out = abi.AppendEntryError(out, 0, "bad")
	return abi.AppendEntryRecord(out, 1, 0, &abi.Record{Value: []byte("out")}), nil
}

func (g *scriptedGuest) Close(context.Context) error { return nil }

// traceSink is a Tracer that writes down each record it is passed with the
// input it answers: a position in batch, or a timer.
type traceSink struct {
	batch  []abi.Record
	inputs []*abi.Record
	lines  []string
}

func (s *traceSink) Answers(inputs []*abi.Record) { s.inputs = inputs }

func (s *traceSink) name(rec *abi.Record) string {
	for i := range s.batch {
		if &s.batch[i] == rec {
			return fmt.Sprintf("input %d", i)
		}
	}
	return fmt.Sprintf("timer %s@%d", rec.Key, rec.Timestamp)
}

func (s *traceSink) Process(_ context.Context, recs []abi.Record) error {
	for i, r := range recs {
		s.lines = append(s.lines, fmt.Sprintf("%s@%d %s <- %s", r.Key, r.Timestamp, r.Value, s.name(s.inputs[i])))
	}
	return nil
}
func (s *traceSink) Advance(context.Context, int64) error { return nil }
func (s *traceSink) Tick(context.Context, int64) error    { return nil }
func (s *traceSink) Finish(context.Context) error         { return nil }
func (s *traceSink) Close(context.Context) error          { return nil }

// The operator's frames carry its Clock, Timers lists what is registered,
// a Tracer hears which input (record of the batch, in spite of the key
// order the frame has, or timer) each output answers, and the error
// policy's Report gets the failed record of the batch.
func TestProcessSeams(t *testing.T) {
	keyed, err := state.Open(state.Config{MaxParallelism: 128, Range: state.RangeOf(128, 1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	guest := &scriptedGuest{}
	sink := &traceSink{batch: []abi.Record{keyed1("b", 1), keyed1("a", 2)}}
	policy := &operator.ErrorPolicy{Mode: operator.OnErrorFail, Vertex: "op", Counts: &operator.ErrorCounts{},
		Report: func(_ context.Context, rec *abi.Record, cause error) error {
			sink.lines = append(sink.lines, fmt.Sprintf("%s failed: %v", sink.name(rec), cause))
			return nil
		}}
	op := New("op", operator.GroupCall{Module: "m", Function: "p", Fn: 0, Guest: guest},
		&operator.GroupCall{Module: "m", Function: "t", Fn: 1, Guest: guest}, keyed, 16, policy, sink)
	t.Cleanup(func() { _ = op.Close(context.Background()) })
	op.Clock = func() int64 { return 7 }
	ctx := context.Background()
	if err := op.Process(ctx, sink.batch); err != nil {
		t.Fatal(err)
	}
	timers := op.Timers(abi.EventTime)
	if len(timers) != 1 || string(timers[0].Key) != "a" || timers[0].Timestamp != 100 || len(op.Timers(abi.ProcessingTime)) != 0 {
		t.Fatalf("timers %+v", timers)
	}
	if err := op.Advance(ctx, watermark.MaxWatermark); err != nil {
		t.Fatal(err)
	}
	want := []string{"b@1 out <- input 0", "input 1 failed: udf[m] function[p]: bad", "a@100 fired <- timer a@100"}
	if !reflect.DeepEqual(sink.lines, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(sink.lines, "\n"), strings.Join(want, "\n"))
	}
	if !reflect.DeepEqual(guest.times, []int64{7, 7}) || len(op.Timers(abi.EventTime)) != 0 {
		t.Fatalf("processing times %v, timers left %d", guest.times, len(op.Timers(abi.EventTime)))
	}
}

func keyed1(key string, ts int64) abi.Record {
	return abi.Record{Key: []byte(key), Value: []byte(key), Timestamp: ts}
}
