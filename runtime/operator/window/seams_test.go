package window

import (
	"context"
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
	"wasmstream.io/platform/watermark"
)

// windowTrace is a Tracer that writes down each result with the window it
// answers (as key@end-1).
type windowTrace struct {
	inputs []*abi.Record
	lines  []string
}

func (s *windowTrace) Answers(inputs []*abi.Record) { s.inputs = inputs }

func (s *windowTrace) Process(_ context.Context, recs []abi.Record) error {
	for i, r := range recs {
		s.lines = append(s.lines, fmt.Sprintf("%s@%d %s <- %s@%d", r.Key, r.Timestamp, r.Value, s.inputs[i].Key, s.inputs[i].Timestamp))
	}
	return nil
}
func (s *windowTrace) Advance(context.Context, int64) error { return nil }
func (s *windowTrace) Tick(context.Context, int64) error    { return nil }
func (s *windowTrace) Finish(context.Context) error         { return nil }
func (s *windowTrace) Close(context.Context) error          { return nil }

func seamConfig(wp *plan.Window, next operator.Stage) Config {
	return Config{Vertex: "w", Plan: wp, BatchSize: 16, Next: next, LateCount: &atomic.Int64{},
		Policy: &operator.ErrorPolicy{Mode: operator.OnErrorFail, Vertex: "w", Counts: &operator.ErrorCounts{}}}
}

func groupCall(t *testing.T, mod *host.Module, function string) *operator.GroupCall {
	fn := mod.Description.Lookup(function)
	if fn < 0 {
		t.Fatalf("no function %s", function)
	}
	return &operator.GroupCall{Module: mod.ID, Function: function, Fn: fn, Guest: mod.NewGuest(host.InstanceConfig{})}
}

// Processing-time windows follow Config.Clock.
func TestWindowConfigClock(t *testing.T) {
	out := &optest.Tape{}
	cfg := seamConfig(&plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Builtin: "count", Processing: true}, out)
	cfg.Clock = func() int64 { return 25 }
	w := New(cfg)
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	steps := []optest.Step{"k@1 a; k@900 b", "wm max"}
	optest.Run(t, w, steps)
	optest.CheckLines(t, "output", out.Lines, []string{`k@29 {"key":"k","window_start":20,"window_end":30,"value":2}`, "wm max"})
}

// Config.Clearing sees each window's state before it is cleared, and a
// Tracer hears the window of each result, whatever key the result has.
func TestWindowClearingAndTrace(t *testing.T) {
	mod := optest.Module(t, "firings")
	descs, err := operator.StateDescriptors(mod.Description, nil)
	if err != nil {
		t.Fatal(err)
	}
	keyed, err := state.Open(state.Config{MaxParallelism: 128, Range: state.RangeOf(128, 1, 0), States: descs})
	if err != nil {
		t.Fatal(err)
	}
	out := &windowTrace{}
	cfg := seamConfig(&plan.Window{Type: plan.WindowTumbling, Size: 10_000, Slide: 10_000, FnKind: abi.KindWindowProcess, States: true}, out)
	cfg.Fn = groupCall(t, mod, "count")
	cfg.State, cfg.States = keyed, len(descs)
	var cleared []string
	cfg.Clearing = func(key []byte, start, end int64) error {
		v, ok, err := keyed.Value(0)
		if err != nil || !ok {
			return fmt.Errorf("state of %s [%d, %d): %v %v", key, start, end, ok, err)
		}
		cleared = append(cleared, fmt.Sprintf("%s [%d,%d) fired %d", key, start, end, binary.LittleEndian.Uint64(v)))
		return nil
	}
	w := New(cfg)
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	ctx := context.Background()
	if err := w.Process(ctx, []abi.Record{{Key: []byte("a"), Timestamp: 1_000}, {Key: []byte("b"), Timestamp: 12_000}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Advance(ctx, watermark.MaxWatermark); err != nil {
		t.Fatal(err)
	}
	wantOut := []string{"a@9999 a [0,10000) firing 1: 1 records <- a@9999", "b@19999 b [10000,20000) firing 1: 1 records <- b@19999"}
	if !reflect.DeepEqual(out.lines, wantOut) {
		t.Fatalf("output\n%s\nwant\n%s", strings.Join(out.lines, "\n"), strings.Join(wantOut, "\n"))
	}
	if want := []string{"a [0,10000) fired 1", "b [10000,20000) fired 1"}; !reflect.DeepEqual(cleared, want) {
		t.Fatalf("cleared %q, want %q", cleared, want)
	}
}

// SessionGaps are the gaps of the last batch's records, negative for the
// ones the function failed.
func TestWindowSessionGaps(t *testing.T) {
	mod := optest.Module(t, "windowkinds-c")
	out := &optest.Tape{}
	cfg := seamConfig(&plan.Window{Type: plan.WindowSession, Builtin: "count"}, out)
	cfg.GapFn = groupCall(t, mod, "gap")
	var failed []string
	cfg.Policy.Report = func(_ context.Context, rec *abi.Record, cause error) error {
		failed = append(failed, fmt.Sprintf("%s@%d: %v", rec.Key, rec.Timestamp, cause))
		return nil
	}
	w := New(cfg)
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	steps := []optest.Step{"a@1000 x; a@2000 beat; b@2500 !", "wm max"}
	optest.Run(t, w, steps[:1])
	if got, want := w.SessionGaps(), []int64{1000, 4000, -1}; !reflect.DeepEqual(got, want) {
		t.Fatalf("gaps %v, want %v", got, want)
	}
	optest.Run(t, w, steps[1:])
	optest.CheckLines(t, "output", out.Lines, []string{`a@5999 {"key":"a","window_start":1000,"window_end":6000,"value":2}`, "wm max"})
	if want := []string{"b@2500: udf[" + mod.ID + "] function[gap]: session gap failed"}; !reflect.DeepEqual(failed, want) {
		t.Fatalf("failed %q, want %q", failed, want)
	}
}
