package window

import (
	"context"
	"fmt"
	"testing"

	"wasmstream.io/platform/runtime/operator/optest"
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
	recs  optest.Step
	tick  bool
	end   bool
}

// TestSourceWatermarksIdleSplit feeds a two-split source into a tumbling
// count window: the second split says nothing, holds the watermark back
// until idle_timeout marks it idle, and is aligned again once it catches
// up.
func TestSourceWatermarksIdleSplit(t *testing.T) {
	clock := &fakeClock{}
	out := &optest.Tape{}
	w, _ := testWindow(&plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Builtin: builtinCount}, nil, out, nil)
	var idles []string
	announce := func(_ context.Context, idle bool) error {
		idles = append(idles, fmt.Sprintf("idle %v at %d", idle, clock.now))
		out.Lines = append(out.Lines, fmt.Sprintf("idle %v", idle))
		return nil
	}
	g := watermark.NewGenerator(watermark.Bounded, 2, 0, 100, announce, w)
	g.Clock = clock.read
	g.SetSplits(2)
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
			g.Split = st.split
			err = st.recs.Apply(ctx, g)
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	optest.CheckLines(t, "output", out.Lines, []string{
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
	out := &optest.Tape{}
	g := watermark.NewGenerator(watermark.Ingestion, 0, 50, 0, func(context.Context, bool) error { return nil }, out)
	g.Clock = clock.read
	g.SetSplits(1)
	ctx := context.Background()
	if err := optest.Step("k@7 a; j@3 b").Apply(ctx, g); err != nil {
		t.Fatal(err)
	}
	for _, now := range []int64{1010, 1020, 1070, 1100} {
		clock.now = now
		if err := g.Tick(ctx, now); err != nil {
			t.Fatal(err)
		}
	}
	optest.CheckLines(t, "output", out.Lines, []string{"k@1000 a", "j@1000 b", "wm 1009", "wm 1069"})
}

// TestProcessingTimeWindows assigns records by the clock and fires windows
// on ticks; the end of input fires the rest.
func TestProcessingTimeWindows(t *testing.T) {
	clock := &fakeClock{}
	out := &optest.Tape{}
	w, _ := testWindow(&plan.Window{Type: plan.WindowSliding, Size: 20, Slide: 10, Builtin: builtinCount, Processing: true}, nil, out, nil)
	w.clock = clock.read
	ctx := context.Background()
	step := func(now int64, recs optest.Step) {
		t.Helper()
		clock.now = now
		if recs != "" {
			if err := recs.Apply(ctx, w); err != nil {
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
	optest.CheckLines(t, "output", out.Lines, []string{
		// The tick at 9 fires [-10, 10) with what came at 3 and 9.
		`a@9 {"key":"a","window_start":-10,"window_end":10,"value":2}`,
		`b@9 {"key":"b","window_start":-10,"window_end":10,"value":1}`,
		`a@19 {"key":"a","window_start":0,"window_end":20,"value":3}`,
		`b@19 {"key":"b","window_start":0,"window_end":20,"value":1}`,
		// The end of input fires the window still open.
		`a@29 {"key":"a","window_start":10,"window_end":30,"value":1}`, "wm max",
	})
}
