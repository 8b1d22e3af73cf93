package record

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
)

// inputSink is a Tracer that notes, for each record it is passed, the
// position of the input it answers in batch.
type inputSink struct {
	batch  []abi.Record
	inputs []*abi.Record
	lines  []string
}

func (s *inputSink) Answers(inputs []*abi.Record) { s.inputs = inputs }

// position is the position of rec in the batch, or -1.
func (s *inputSink) position(rec *abi.Record) int {
	for i := range s.batch {
		if &s.batch[i] == rec {
			return i
		}
	}
	return -1
}

func (s *inputSink) Process(_ context.Context, recs []abi.Record) error {
	for i, r := range recs {
		s.lines = append(s.lines, fmt.Sprintf("%d: %s", s.position(s.inputs[i]), r.Value))
	}
	return nil
}
func (s *inputSink) Advance(context.Context, int64) error { return nil }
func (s *inputSink) Tick(context.Context, int64) error    { return nil }
func (s *inputSink) Finish(context.Context) error         { return nil }
func (s *inputSink) Close(context.Context) error          { return nil }

// A record function whose next stage is a Tracer tells it the input each
// output answers; the error policy's Report gets the failed inputs
// themselves.
func TestFunctionTracesInputs(t *testing.T) {
	mod := optest.Module(t, "kinds-c")
	fn := mod.Description.Lookup("fields")
	sink := &inputSink{batch: []abi.Record{{Value: []byte("a,b")}, {Value: []byte("c,!")}, {Value: []byte("d")}}}
	policy := &operator.ErrorPolicy{Mode: operator.OnErrorFail, Vertex: "op", Counts: &operator.ErrorCounts{},
		Report: func(_ context.Context, rec *abi.Record, cause error) error {
			sink.lines = append(sink.lines, fmt.Sprintf("%d failed: %v", sink.position(rec), cause))
			return nil
		}}
	op := NewFunction(abi.KindFlatMap, "m", "fields", fn, mod.NewGuest(host.InstanceConfig{}), 1024, policy, sink)
	t.Cleanup(func() { _ = op.Close(context.Background()) })
	if err := op.Process(context.Background(), sink.batch); err != nil {
		t.Fatal(err)
	}
	want := []string{`1 failed: udf[m] function[fields]: field "!" is not allowed`, "0: a", "0: b", "2: d"}
	if !reflect.DeepEqual(sink.lines, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(sink.lines, "\n"), strings.Join(want, "\n"))
	}
}
