package optest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/watermark"
)

// Tape is a Stage that writes down what reaches it: a record as
// "key@timestamp value", a watermark as "wm N" ("wm max" at the end).
type Tape struct{ Lines []string }

var _ operator.Stage = (*Tape)(nil)

func (s *Tape) Process(_ context.Context, recs []abi.Record) error {
	for _, r := range recs {
		s.Lines = append(s.Lines, fmt.Sprintf("%s@%d %s", r.Key, r.Timestamp, r.Value))
	}
	return nil
}

func (s *Tape) Advance(_ context.Context, wm int64) error {
	if wm == watermark.MaxWatermark {
		s.Lines = append(s.Lines, "wm max")
	} else {
		s.Lines = append(s.Lines, fmt.Sprintf("wm %d", wm))
	}
	return nil
}

func (s *Tape) Tick(context.Context, int64) error { return nil }
func (s *Tape) Finish(context.Context) error      { return nil }
func (s *Tape) Close(context.Context) error       { return nil }

// SideTapes are the tapes of an operator with sides side outputs, in the
// order a test lists what it wants of each: the main output, each side
// output, the late records. Stages are the side outputs' tapes, for
// operator.NewSideOutputs.
func SideTapes(sides int) (tapes []*Tape, stages []operator.Stage) {
	tapes = []*Tape{{}}
	for range sides {
		tape := &Tape{}
		tapes = append(tapes, tape)
		stages = append(stages, tape)
	}
	return append(tapes, &Tape{}), stages
}

// Count is a Stage that counts the records reaching it.
type Count struct{ N int64 }

func (c *Count) Process(_ context.Context, recs []abi.Record) error {
	c.N += int64(len(recs))
	return nil
}
func (c *Count) Advance(context.Context, int64) error { return nil }
func (c *Count) Tick(context.Context, int64) error    { return nil }
func (c *Count) Finish(context.Context) error         { return nil }
func (c *Count) Close(context.Context) error          { return nil }

// Step is one input of an operator test: records "key@ts value", several
// separated by ";" in one batch, a watermark "wm N" ("wm max" ends the
// input), or processing time "tick N" (the stage's Tick at N).
type Step string

// Apply gives the step to s.
func (st Step) Apply(ctx context.Context, s operator.Stage) error {
	text := string(st)
	if rest, ok := strings.CutPrefix(text, "tick "); ok {
		var now int64
		if _, err := fmt.Sscan(rest, &now); err != nil {
			return fmt.Errorf("tick %q: %w", rest, err)
		}
		return s.Tick(ctx, now)
	}
	if rest, ok := strings.CutPrefix(text, "wm "); ok {
		if rest == "max" {
			return s.Advance(ctx, watermark.MaxWatermark)
		}
		var wm int64
		fmt.Sscan(rest, &wm)
		return s.Advance(ctx, wm)
	}
	var recs []abi.Record
	for _, one := range strings.Split(text, ";") {
		keyTs, value, _ := strings.Cut(strings.TrimSpace(one), " ")
		key, tsText, _ := strings.Cut(keyTs, "@")
		var ts int64
		fmt.Sscan(tsText, &ts)
		recs = append(recs, abi.Record{Key: []byte(key), Value: []byte(value), Timestamp: ts})
	}
	return s.Process(ctx, recs)
}

// Run applies steps to s in order and fails the test at the first error.
func Run(t testing.TB, s operator.Stage, steps []Step) {
	t.Helper()
	for _, st := range steps {
		if err := st.Apply(context.Background(), s); err != nil {
			t.Fatalf("step %q: %v", st, err)
		}
	}
}

// Clock is a processing-time clock that steps move, for operators that
// read the time themselves (as records arrive): Read is the clock.
type Clock struct{ Now int64 }

// Read is the clock's time.
func (c *Clock) Read() int64 { return c.Now }

// RunClock is Run with a clock: "at N" sets the clock to N (the records of
// the steps after it arrive at N), and "tick N" sets it to N before the
// stage's Tick.
func RunClock(t testing.TB, s operator.Stage, c *Clock, steps []Step) {
	t.Helper()
	for _, st := range steps {
		text := string(st)
		at, ok := strings.CutPrefix(text, "at ")
		if !ok {
			at, ok = strings.CutPrefix(text, "tick ")
		}
		if ok {
			if _, err := fmt.Sscan(at, &c.Now); err != nil {
				t.Fatalf("step %q: %v", st, err)
			}
		}
		if strings.HasPrefix(text, "at ") {
			continue
		}
		if err := st.Apply(context.Background(), s); err != nil {
			t.Fatalf("step %q: %v", st, err)
		}
	}
}

// JoinStep is one input of a two-input operator's test: "L " or "R " and a
// Step for the left or right input, or a watermark "wm N".
type JoinStep string

// Apply gives the step to s, telling in which input it arrives.
func (st JoinStep) Apply(ctx context.Context, s operator.Stage, in *operator.Inputs) error {
	text := string(st)
	if side, rest, ok := strings.Cut(text, " "); ok && (side == "L" || side == "R") {
		in.From(map[string]int{"L": 0, "R": 1}[side])
		return Step(rest).Apply(ctx, s)
	}
	return Step(text).Apply(ctx, s)
}

// CheckLines fails the test when got differs from want, showing both.
func CheckLines(t testing.TB, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s:\n got:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// Values is a Stage that keeps a copy of each record value reaching it.
type Values struct{ Values []string }

func (c *Values) Process(_ context.Context, recs []abi.Record) error {
	for _, r := range recs {
		c.Values = append(c.Values, string(r.Value))
	}
	return nil
}
func (c *Values) Advance(context.Context, int64) error { return nil }
func (c *Values) Tick(context.Context, int64) error    { return nil }
func (c *Values) Finish(context.Context) error         { return nil }
func (c *Values) Close(context.Context) error          { return nil }
