package join

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/watermark"
)

// counters are what a test reads back from an operator: the records too
// late to join, and the failed ones.
type counters struct {
	late atomic.Int64
	operator.ErrorCounts
}

func newCounters() *counters { return &counters{} }

func testIntervalJoin(jp *plan.Join, limit int64, out, late *optest.Tape) (*Interval, *counters) {
	c := newCounters()
	var lateStage operator.Stage
	if late != nil {
		lateStage = late
	}
	in := &operator.Inputs{Split: 1}
	return newIntervalJoin("join", jp, in, limit, &c.late, &operator.Out{Max: 2, Next: out}, lateStage), c
}

func TestIntervalJoinGolden(t *testing.T) {
	tests := []struct {
		name     string
		plan     plan.Join
		steps    []optest.JoinStep
		want     []string
		wantLate []string
		lateN    int64
	}{
		{
			name:  "inclusive bounds match at exactly lower and upper",
			plan:  plan.Join{Interval: true, Lower: -2, Upper: 3},
			steps: []optest.JoinStep{"L a@10 1", "R a@7 2; a@8 3; a@13 4; a@14 5; b@10 6", "wm max"},
			want: []string{
				`a@10 {"key":"a","left":1,"right":3}`,
				`a@13 {"key":"a","left":1,"right":4}`,
				"wm max",
			},
		},
		{
			name:  "exclusive bounds leave out the bounds",
			plan:  plan.Join{Interval: true, Lower: -2 + 1, Upper: 3 - 1},
			steps: []optest.JoinStep{"R a@7 2; a@8 3; a@9 4; a@12 5; a@13 6", "L a@10 1", "wm max"},
			want: []string{
				`a@10 {"key":"a","left":1,"right":4}`,
				`a@12 {"key":"a","left":1,"right":5}`,
				"wm max",
			},
		},
		{
			name:  "empty right side emits nothing",
			plan:  plan.Join{Interval: true, Lower: -5, Upper: 5},
			steps: []optest.JoinStep{"L a@1 1; b@2 2", "wm 3", "wm max"},
			want:  []string{"wm 3", "wm max"},
		},
		{
			name:  "empty left side emits nothing",
			plan:  plan.Join{Interval: true, Lower: -5, Upper: 5},
			steps: []optest.JoinStep{"R a@1 1; b@2 2", "wm max"},
			want:  []string{"wm max"},
		},
		{
			name:  "several matches on both sides, in arrival order",
			plan:  plan.Join{Interval: true, Lower: 0, Upper: 10},
			steps: []optest.JoinStep{"L k@0 1; k@5 2", "R k@7 3", "L k@6 4", "wm max"},
			want: []string{
				`k@7 {"key":"k","left":1,"right":3}`,
				`k@7 {"key":"k","left":2,"right":3}`,
				`k@7 {"key":"k","left":4,"right":3}`,
				"wm max",
			},
		},
		{
			name:     "records at or below the watermark are late on either side",
			plan:     plan.Join{Interval: true, Lower: -5, Upper: 5},
			steps:    []optest.JoinStep{"L a@10 1", "wm 10", "R a@10 2; a@11 3", "L a@9 4", "wm max"},
			want:     []string{"wm 10", `a@11 {"key":"a","left":1,"right":3}`, "wm max"},
			wantLate: []string{"wm 10", "a@10 2", "a@9 4", "wm max"},
			lateN:    2,
		},
		{
			name:  "allowed lateness keeps records joinable",
			plan:  plan.Join{Interval: true, Lower: 0, Upper: 3, Lateness: 5},
			steps: []optest.JoinStep{"L a@10 1", "wm 17", "R a@13 2", "wm 18", "R a@14 3", "wm max"},
			want:  []string{"wm 17", `a@13 {"key":"a","left":1,"right":2}`, "wm 18", "wm max"},
			// a@14 is outside [10, 13]; not late (14+5 > 18) but unmatched.
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, late := &optest.Tape{}, &optest.Tape{}
			j, c := testIntervalJoin(&tc.plan, 1<<20, out, late)
			ctx := context.Background()
			for _, st := range tc.steps {
				if err := st.Apply(ctx, j, j.inputs); err != nil {
					t.Fatalf("%s: %v", st, err)
				}
			}
			optest.CheckLines(t, "output", out.Lines, tc.want)
			if tc.wantLate == nil {
				tc.wantLate = []string{}
				for _, st := range tc.steps {
					if strings.HasPrefix(string(st), "wm ") {
						tc.wantLate = append(tc.wantLate, string(st))
					}
				}
			}
			optest.CheckLines(t, "late", late.Lines, tc.wantLate)
			if got := c.late.Load(); got != tc.lateN {
				t.Errorf("late count = %d, want %d", got, tc.lateN)
			}
		})
	}
}

// TestIntervalJoinStateBounded runs an endless-looking stream of 1,000 keys
// on both sides with an advancing watermark: the buffered records and bytes
// never exceed what the interval and the watermark lag keep alive.
func TestIntervalJoinStateBounded(t *testing.T) {
	out := &discardCounter{}
	jp := &plan.Join{Interval: true, Lower: -5, Upper: 5}
	c := newCounters()
	in := &operator.Inputs{Split: 1}
	j := newIntervalJoin("join", jp, in, 1<<20, &c.late, &operator.Out{Max: 256, Next: out}, nil)
	ctx := context.Background()
	const keys, steps = 1000, 2000
	recs := make([]abi.Record, keys)
	for k := range recs {
		recs[k].Key = []byte(fmt.Sprintf("k%04d", k))
		recs[k].Value = []byte("1")
	}
	maxLeft, maxRight := 0, 0
	var maxUsed int64
	for ts := int64(0); ts < steps; ts++ {
		for side := range 2 {
			in.From(side)
			for k := range recs {
				recs[k].Timestamp = ts
			}
			if err := j.Process(ctx, recs); err != nil {
				t.Fatal(err)
			}
		}
		if err := j.Advance(ctx, ts-1); err != nil {
			t.Fatal(err)
		}
		l, r := j.buffered()
		maxLeft, maxRight, maxUsed = max(maxLeft, l), max(maxRight, r), max(maxUsed, j.used)
	}
	// A left record at t lives while the watermark is below t+5 and a right
	// one while it is below t+5: with the watermark at ts-1 that is the
	// times ts-5 .. ts, six per key.
	if maxLeft != 6*keys || maxRight != 6*keys {
		t.Errorf("buffered at most %d left and %d right records, want %d each", maxLeft, maxRight, 6*keys)
	}
	if want := int64(12 * keys * (5 + 1 + joinRecOverhead)); maxUsed != want {
		t.Errorf("used at most %d bytes, want %d", maxUsed, want)
	}
	// Each right record meets the left records of times ts-5 .. ts+5 of its
	// key that arrived before it or after it, once per pair.
	if err := j.Advance(ctx, watermark.MaxWatermark); err != nil {
		t.Fatal(err)
	}
	if l, r := j.buffered(); l != 0 || r != 0 || j.used != 0 {
		t.Errorf("after the last watermark: %d left, %d right, %d bytes; want none", l, r, j.used)
	}
	var pairs int64
	for ts := int64(0); ts < steps; ts++ {
		pairs += min(ts+5, steps-1) - max(ts-5, 0) + 1
	}
	if got := out.n; got != pairs*keys {
		t.Errorf("emitted %d pairs, want %d", got, pairs*keys)
	}
}

// discardCounter counts the records reaching it.
type discardCounter struct{ n int64 }

func (d *discardCounter) Process(_ context.Context, recs []abi.Record) error {
	d.n += int64(len(recs))
	return nil
}
func (d *discardCounter) Advance(context.Context, int64) error { return nil }
func (d *discardCounter) Tick(context.Context, int64) error    { return nil }
func (d *discardCounter) Finish(context.Context) error         { return nil }
func (d *discardCounter) Close(context.Context) error          { return nil }

func TestIntervalJoinBudget(t *testing.T) {
	j, _ := testIntervalJoin(&plan.Join{Interval: true, Lower: 0, Upper: 10}, 100, &optest.Tape{}, nil)
	err := optest.Step("a@1 1; a@2 2; a@3 3").Apply(context.Background(), j)
	want := `operator[join]: join state exceeds its budget of 100 bytes (record key "a")`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

// buffered is the number of records the join holds on each side.
func (j *Interval) buffered() (left, right int) {
	for _, k := range j.sides[0] {
		left += len(k.recs)
	}
	for _, k := range j.sides[1] {
		right += len(k.recs)
	}
	return left, right
}
