package runtime

import (
	"context"
	"fmt"
	"testing"

	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/watermark"
)

// fakeClock is a processing-time clock tests move by hand.
type fakeClock struct{ now int64 }

func (c *fakeClock) read() int64 { return c.now }

// sourceStep is one input of a source test: records of a split, a tick of
// the clock, or the end of input.
type sourceStep struct {
	now   int64
	split int
	recs  windowStep
	tick  bool
	end   bool
}

// TestSourceWatermarksIdleSplit feeds a two-split source into a tumbling
// count window: the second split says nothing, holds the watermark back
// until idle_timeout marks it idle, and is aligned again once it catches
// up.
func TestSourceWatermarksIdleSplit(t *testing.T) {
	clock := &fakeClock{}
	out := &tapeSink{}
	w, _ := testWindow(&plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Builtin: builtinCount}, nil, out, nil)
	var idles []string
	announce := func(_ context.Context, idle bool) error {
		idles = append(idles, fmt.Sprintf("idle %v at %d", idle, clock.now))
		out.lines = append(out.lines, fmt.Sprintf("idle %v", idle))
		return nil
	}
	g := newWMSource(wmBounded, 2, 0, 100, announce, w)
	g.clock = clock.read
	g.setSplits(2)
	steps := []sourceStep{
		{now: 0, split: 0, recs: "k@3 a; k@15 b"},
		{now: 50, tick: true},
		{now: 60, split: 0, recs: "k@25 c"},
		{now: 100, tick: true},
		{now: 200, tick: true},
		{now: 250, split: 1, recs: "k@5 late; k@30 d"},
		{now: 260, split: 0, recs: "k@40 e"},
		{end: true},
	}
	ctx := context.Background()
	for i, st := range steps {
		clock.now = st.now
		var err error
		switch {
		case st.end:
			err = g.Advance(ctx, watermark.MaxWatermark)
		case st.tick:
			err = g.Tick(ctx, st.now)
		default:
			g.split = st.split
			err = st.recs.apply(ctx, g)
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	checkLines(t, "output", out.lines, []string{
		// Split 1 has no watermark and holds the minimum back until it is
		// idle at 100; then split 0's 25-2-1 goes out.
		`k@9 {"key":"k","window_start":0,"window_end":10,"value":1}`,
		`k@19 {"key":"k","window_start":10,"window_end":20,"value":1}`, "wm 22",
		// At 200 split 0 is idle too: the subtask is idle.
		"idle true",
		// Split 1 comes back: k@5 is late, and 30-2-1 goes out after k@30.
		"idle false", "wm 27",
		// Split 0 comes back behind (22 < 27) and is left out of the
		// minimum until its 40-2-1 catches up: the minimum stays 27.
		`k@29 {"key":"k","window_start":20,"window_end":30,"value":1}`,
		`k@39 {"key":"k","window_start":30,"window_end":40,"value":1}`,
		`k@49 {"key":"k","window_start":40,"window_end":50,"value":1}`, "wm max",
	})
	if len(idles) != 2 {
		t.Fatalf("idleness changes %v", idles)
	}
}

// TestIngestionTime stamps records with the clock and lets the watermark
// follow it.
func TestIngestionTime(t *testing.T) {
	clock := &fakeClock{now: 1000}
	out := &tapeSink{}
	g := newWMSource(wmIngestion, 0, 50, 0, func(context.Context, bool) error { return nil }, out)
	g.clock = clock.read
	g.setSplits(1)
	ctx := context.Background()
	if err := windowStep("k@7 a; j@3 b").apply(ctx, g); err != nil {
		t.Fatal(err)
	}
	for _, now := range []int64{1010, 1020, 1070, 1100} {
		clock.now = now
		if err := g.Tick(ctx, now); err != nil {
			t.Fatal(err)
		}
	}
	checkLines(t, "output", out.lines, []string{"k@1000 a", "j@1000 b", "wm 1009", "wm 1069"})
}

// TestProcessingTimeWindows assigns records by the clock and fires windows
// on ticks; the end of input fires the rest.
func TestProcessingTimeWindows(t *testing.T) {
	clock := &fakeClock{}
	out := &tapeSink{}
	w, _ := testWindow(&plan.Window{Type: plan.WindowSliding, Size: 20, Slide: 10, Builtin: builtinCount, Processing: true}, nil, out, nil)
	w.clock = clock.read
	ctx := context.Background()
	step := func(now int64, recs windowStep) {
		t.Helper()
		clock.now = now
		if recs != "" {
			if err := recs.apply(ctx, w); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Tick(ctx, now); err != nil {
			t.Fatal(err)
		}
	}
	step(3, "a@999 x; b@0 y")
	step(9, "a@0 z")
	step(12, "a@0 w")
	step(19, "")
	if err := w.Advance(ctx, watermark.MaxWatermark); err != nil {
		t.Fatal(err)
	}
	checkLines(t, "output", out.lines, []string{
		// The tick at 9 fires [-10, 10) with what came at 3 and 9.
		`a@9 {"key":"a","window_start":-10,"window_end":10,"value":2}`,
		`b@9 {"key":"b","window_start":-10,"window_end":10,"value":1}`,
		`a@19 {"key":"a","window_start":0,"window_end":20,"value":3}`,
		`b@19 {"key":"b","window_start":0,"window_end":20,"value":1}`,
		// The end of input fires the window still open.
		`a@29 {"key":"a","window_start":10,"window_end":30,"value":1}`, "wm max",
	})
}

// TestPunctuatedWatermarks runs the heartbeat watermark function of
// udfs/sessions in a source.
func TestPunctuatedWatermarks(t *testing.T) {
	mod := windowModule(t, "sessions")
	out := &tapeSink{}
	c := newCounters()
	g := newWMSource(wmPunctuated, 0, 200, 0, func(context.Context, bool) error { return nil }, out)
	g.setSplits(1)
	fn := mod.Description.Lookup("heartbeat")
	g.punct = &punctuator{module: mod.ID, function: "heartbeat", fn: fn, pool: mod.NewGuest(host.InstanceConfig{}), batchSize: 2,
		policy: &operator.ErrorPolicy{Mode: operator.OnErrorFail, Vertex: "src", Counts: &c.ErrorCounts}}
	t.Cleanup(func() { _ = g.Close(context.Background()) })
	steps := windowStep(`k@5 {"a":1}; k@9 {"heartbeat":true}; k@7 {"b":2}; k@20 {"heartbeat":false}; k@30 {"heartbeat":true}`)
	if err := steps.apply(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	checkLines(t, "output", out.lines, []string{
		`k@5 {"a":1}`, `k@9 {"heartbeat":true}`, "wm 9", `k@7 {"b":2}`, `k@20 {"heartbeat":false}`, `k@30 {"heartbeat":true}`, "wm 30",
	})
	if c.UDFErrors.Load() != 0 {
		t.Fatal("udf errors")
	}
}
