package operator

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
)

// traceSink is a Tracer that writes down each record it is passed with the
// input it answers.
type traceSink struct {
	inputs []*abi.Record
	lines  []string
}

func (s *traceSink) Answers(inputs []*abi.Record) { s.inputs = inputs }

func (s *traceSink) Process(_ context.Context, recs []abi.Record) error {
	if len(s.inputs) != len(recs) {
		return fmt.Errorf("%d records answer %d inputs", len(recs), len(s.inputs))
	}
	for i, r := range recs {
		s.lines = append(s.lines, fmt.Sprintf("%s@%d %s <- %s@%d", r.Key, r.Timestamp, r.Value, s.inputs[i].Key, s.inputs[i].Timestamp))
	}
	return nil
}
func (s *traceSink) Advance(context.Context, int64) error { return nil }
func (s *traceSink) Tick(context.Context, int64) error    { return nil }
func (s *traceSink) Finish(context.Context) error         { return nil }
func (s *traceSink) Close(context.Context) error          { return nil }

// Report takes failed records in place of the mode, after counting them;
// the mode still decides that a failed call of several inputs fails.
func TestErrorPolicyReport(t *testing.T) {
	var got []*abi.Record
	var causes []string
	p := &ErrorPolicy{Mode: OnErrorFail, Vertex: "v", Counts: &ErrorCounts{}, Report: func(_ context.Context, rec *abi.Record, cause error) error {
		got, causes = append(got, rec), append(causes, cause.Error())
		return nil
	}}
	batch := []abi.Record{{Value: []byte("a")}, {Value: []byte("b")}}
	if err := p.RecordFailed(context.Background(), &batch[1], errors.New("bad b")); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != &batch[1] || causes[0] != "bad b" || p.Counts.UDFErrors.Load() != 1 {
		t.Fatalf("reported %v %q, udf errors %d", got, causes, p.Counts.UDFErrors.Load())
	}
	trap := &host.CallError{Module: "m", Function: "f", Kind: host.KindTrap, Err: errors.New("unreachable")}
	err := p.Isolate(0, 2, func(int, int) error { return trap }, func(i int, err error) error { return p.RecordFailed(context.Background(), &batch[i], err) })
	if want := "operator[v]: udf[m] function[f]: trap: unreachable"; err == nil || err.Error() != want {
		t.Fatalf("isolate: %v, want %q", err, want)
	}
	stop := errors.New("stop")
	p.Report = func(context.Context, *abi.Record, error) error { return stop }
	if err := p.RecordFailed(context.Background(), &batch[0], errors.New("bad a")); err != stop {
		t.Fatalf("error %v, want the report's", err)
	}
}

// With a Tracer, Out tells it the window of each result it passes on,
// whatever key and timestamp the result has, leaving out the results a
// failed group truncated.
func TestOutTracesWindows(t *testing.T) {
	sink := &traceSink{}
	o := &Out{Max: 100, Next: sink, Tracer: sink}
	key := []byte("k")
	o.EmitEntry(&abi.Entry{Tag: abi.TagRecord, Flags: abi.HasKey | abi.HasTimestamp, Key: []byte("other"), Timestamp: 7, Value: []byte("v1")}, key, 10)
	mark := o.Batch.Len()
	o.EmitEntry(&abi.Entry{Tag: abi.TagRecord, Value: []byte("dropped")}, []byte("gone"), 10)
	o.Batch.Truncate(mark)
	o.Emit([]byte("r"), []byte("reduced"), 19, nil)
	o.EmitBuiltin([]byte("b"), 20, 30, []byte("3"))
	key[0] = 'x' // the window's key is copied
	if err := o.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	o.Emit([]byte("s"), []byte("next"), 39, nil)
	if err := o.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"other@7 v1 <- k@9",
		"r@19 reduced <- r@19",
		`b@29 {"key":"b","window_start":20,"window_end":30,"value":3} <- b@29`,
		"s@39 next <- s@39",
	}
	if !reflect.DeepEqual(sink.lines, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(sink.lines, "\n"), strings.Join(want, "\n"))
	}
}

// frameCaller is a Caller that notes the processing time of the grouped
// frames it is called with and answers each group with an accumulator.
type frameCaller struct{ times []int64 }

func (c *frameCaller) Call(_ context.Context, _ int, frame []byte) ([]byte, error) {
	var gr abi.GroupReader
	if err := gr.Reset(frame); err != nil {
		return nil, err
	}
	c.times = append(c.times, gr.Head().ProcessingTime)
	groups := gr.Head().Groups
	out := binary.LittleEndian.AppendUint32(nil, groups)
	for g := range groups {
		out = abi.AppendEntryAccumulator(out, g, []byte("acc"))
	}
	return out, nil
}
func (c *frameCaller) Close(context.Context) error { return nil }

// A GroupRunner's frames carry its Clock's processing time.
func TestGroupRunnerClock(t *testing.T) {
	guest := &frameCaller{}
	w := &GroupRunner{Kind: abi.KindAggregate, MaxGroups: 10, Out: &Out{Max: 10, Next: &traceSink{}},
		Policy: &ErrorPolicy{Mode: OnErrorFail, Counts: &ErrorCounts{}}, Clock: func() int64 { return 42 },
		Call: GroupCall{Module: "m", Function: "f", Guest: guest}}
	var accs []string
	err := w.Run(context.Background(), abi.OpAdd, abi.NoWatermark, 2, GroupHandlers{
		Add: func(i int) { w.Call.Add(&abi.GroupHead{Key: []byte{byte('a' + i)}}, nil) },
		Acc: func(i int, acc []byte) error {
			accs = append(accs, fmt.Sprintf("%d:%s", i, acc))
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(guest.times, []int64{42}) || !reflect.DeepEqual(accs, []string{"0:acc", "1:acc"}) {
		t.Fatalf("processing times %v, accumulators %v", guest.times, accs)
	}
}
