package join

import (
	"context"
	"fmt"
	"math"
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
	j := newIntervalJoin("join", jp, in, limit, &c.late, &operator.Out{Max: 2, Next: out}, lateStage)
	if indexSides {
		j.index(0)
		j.index(1)
	}
	return j, c
}

// indexSides makes testIntervalJoin's joins index both sides by key from the
// start; bothModes runs a test with logs (the sides' start) and with
// indexes.
var indexSides bool

func bothModes(t *testing.T, test func(t *testing.T)) {
	for _, indexed := range []bool{false, true} {
		t.Run(map[bool]string{false: "log", true: "indexed"}[indexed], func(t *testing.T) {
			indexSides = indexed
			defer func() { indexSides = false }()
			test(t)
		})
	}
}

func TestIntervalJoinGolden(t *testing.T) {
	bothModes(t, func(t *testing.T) {
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
				name:  "records below the watermark are late on either side, at it are not",
				plan:  plan.Join{Interval: true, Lower: -5, Upper: 5},
				steps: []optest.JoinStep{"L a@10 1", "wm 10", "R a@10 2; a@11 3; a@9 5", "L a@9 4", "wm max"},
				want: []string{"wm 10",
					`a@10 {"key":"a","left":1,"right":2}`,
					`a@11 {"key":"a","left":1,"right":3}`, "wm max"},
				wantLate: []string{"wm 10", "a@9 5", "a@9 4", "wm max"},
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
	})
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
	// A left record at t lives while the watermark is at or below t+5 (a
	// right record at t+5 is not late until the watermark passes it), and
	// a right one likewise: with the watermark at ts-1 that is the times
	// ts-6 .. ts, seven per key.
	if maxLeft != 7*keys || maxRight != 7*keys {
		t.Errorf("buffered at most %d left and %d right records, want %d each", maxLeft, maxRight, 7*keys)
	}
	if want := int64(14 * keys * (5 + 1 + joinRecOverhead)); maxUsed != want {
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
	bothModes(t, func(t *testing.T) {
		j, _ := testIntervalJoin(&plan.Join{Interval: true, Lower: 0, Upper: 10}, 100, &optest.Tape{}, nil)
		err := optest.Step("a@1 1; a@2 2; a@3 3").Apply(context.Background(), j)
		want := `operator[join]: join state exceeds its budget of 100 bytes (record key "a")`
		if err == nil || err.Error() != want {
			t.Fatalf("err = %v, want %s", err, want)
		}
	})
}

// buffered is the number of records the join holds on each side.
func (j *Interval) buffered() (left, right int) {
	for _, recs := range j.sides[0].byKey() {
		left += len(recs)
	}
	for _, recs := range j.sides[1].byKey() {
		right += len(recs)
	}
	return left, right
}

// byKey is a side's buffered records by key, in the order matches gives
// them.
func (s *joinSide) byKey() map[string][]joinRec {
	m := map[string][]joinRec{}
	if s.indexed() {
		for key, k := range s.keys {
			m[key] = append([]joinRec(nil), k.recs...)
		}
		return m
	}
	for i := s.head; i < len(s.log); i++ {
		r := &s.log[i]
		m[string(r.key())] = append(m[string(r.key())], joinRec{ts: r.ts, value: r.value()})
	}
	return m
}

// TestIntervalJoinLatenessBoundary checks both sides at the lateness bound:
// with the watermark at 100, a record at 100 - allowed lateness + delta is
// late exactly when delta < 0 (timestamp + lateness < watermark), and a
// record that is not late still meets every buffered record of the other
// side in its interval, including one whose last possible match is exactly
// at the bound.
func TestIntervalJoinLatenessBoundary(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		const wm = 100
		for _, side := range []string{"L", "R"} {
			other := map[string]string{"L": "R", "R": "L"}[side]
			for _, lateness := range []int64{0, 5} {
				for _, delta := range []int64{-1, 0, 1} {
					ts := wm - lateness + delta
					t.Run(fmt.Sprintf("%s lateness %d at %d", side, lateness, ts), func(t *testing.T) {
						// The other side's record at ts is buffered before the
						// watermark; an interval of [0, 0] makes ts its last
						// possible match, so it must stay until the watermark
						// passes ts + lateness.
						jp := plan.Join{Interval: true, Lower: 0, Upper: 0, Lateness: lateness}
						steps := []optest.JoinStep{
							optest.JoinStep(fmt.Sprintf("%s a@%d o", other, ts)),
							optest.JoinStep(fmt.Sprintf("wm %d", wm)),
							optest.JoinStep(fmt.Sprintf("%s a@%d p", side, ts)),
							"wm max",
						}
						wantOut, wantLate := []string{fmt.Sprintf("wm %d", wm)}, []string{fmt.Sprintf("wm %d", wm)}
						var lateN int64
						if delta < 0 {
							wantLate = append(wantLate, fmt.Sprintf("a@%d p", ts))
							lateN = 1
						} else {
							left, right := "o", "p"
							if side == "L" {
								left, right = "p", "o"
							}
							wantOut = append(wantOut, fmt.Sprintf(`a@%d {"key":"a","left":%s,"right":%s}`, ts, left, right))
						}
						wantOut, wantLate = append(wantOut, "wm max"), append(wantLate, "wm max")
						out, late := &optest.Tape{}, &optest.Tape{}
						j, c := testIntervalJoin(&jp, 1<<20, out, late)
						for _, st := range steps {
							if err := st.Apply(context.Background(), j, j.inputs); err != nil {
								t.Fatalf("%s: %v", st, err)
							}
						}
						optest.CheckLines(t, "output", out.Lines, wantOut)
						optest.CheckLines(t, "late", late.Lines, wantLate)
						if got := c.late.Load(); got != lateN {
							t.Errorf("late count = %d, want %d", got, lateN)
						}
						if l, r := j.buffered(); l != 0 || r != 0 || j.used != 0 {
							t.Errorf("after the last watermark: %d left, %d right, %d bytes; want none", l, r, j.used)
						}
					})
				}
			}
		}
	})
}

// TestIntervalJoinExpiryBoundary checks when buffered records are dropped:
// a left record at t stays until the watermark passes t + upper + allowed
// lateness, a right one until it passes t - lower + allowed lateness, and
// not a step longer.
func TestIntervalJoinExpiryBoundary(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		tests := []struct {
			name string
			plan plan.Join
			// side and ts are the buffered record; expires the first watermark
			// that drops it.
			side    int
			ts      int64
			expires int64
		}{
			{name: "left, no lateness", plan: plan.Join{Interval: true, Lower: -5, Upper: 3}, side: 0, ts: 10, expires: 14},
			{name: "left, lateness", plan: plan.Join{Interval: true, Lower: -5, Upper: 3, Lateness: 4}, side: 0, ts: 10, expires: 18},
			{name: "right, no lateness", plan: plan.Join{Interval: true, Lower: -5, Upper: 3}, side: 1, ts: 10, expires: 16},
			{name: "right, lateness", plan: plan.Join{Interval: true, Lower: -5, Upper: 3, Lateness: 4}, side: 1, ts: 10, expires: 20},
			{name: "left, negative upper", plan: plan.Join{Interval: true, Lower: -5, Upper: -2}, side: 0, ts: 10, expires: 9},
			{name: "left near the end of time", plan: plan.Join{Interval: true, Lower: -5, Upper: 3, Lateness: 4}, side: 0, ts: math.MaxInt64 - 5, expires: math.MaxInt64},
			{name: "right near the end of time", plan: plan.Join{Interval: true, Lower: -5, Upper: 3}, side: 1, ts: math.MaxInt64 - 2, expires: math.MaxInt64},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				j, _ := testIntervalJoin(&tc.plan, 1<<20, &optest.Tape{}, &optest.Tape{})
				ctx := context.Background()
				if tc.expires <= tc.ts-10 {
					t.Fatal("bad case")
				}
				// Start the watermark below the record so that it is buffered.
				if err := j.Advance(ctx, tc.ts-10); err != nil {
					t.Fatal(err)
				}
				j.inputs.From(tc.side)
				if err := j.Process(ctx, []abi.Record{{Key: []byte("a"), Value: []byte("1"), Timestamp: tc.ts}}); err != nil {
					t.Fatal(err)
				}
				if got := j.expiry(tc.side, tc.ts); got != tc.expires {
					t.Errorf("expiry %d, want %d", got, tc.expires)
				}
				if err := j.Advance(ctx, tc.expires-1); err != nil {
					t.Fatal(err)
				}
				if l, r := j.buffered(); l+r != 1 {
					t.Fatalf("at watermark %d: %d left, %d right buffered, want the record", tc.expires-1, l, r)
				}
				if err := j.Advance(ctx, tc.expires); err != nil {
					t.Fatal(err)
				}
				if l, r := j.buffered(); l+r != 0 || j.used != 0 {
					t.Fatalf("at watermark %d: %d left, %d right buffered (%d bytes), want none", tc.expires, l, r, j.used)
				}
			})
		}
	})
}

// TestIntervalJoinInt64Limits joins records at the ends of the int64 range:
// interval bounds and expiries are capped instead of wrapping around, so
// records meet and are dropped at the end of input.
func TestIntervalJoinInt64Limits(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		const maxTs, minTs = math.MaxInt64, math.MinInt64
		tests := []struct {
			name  string
			plan  plan.Join
			steps []optest.JoinStep
			want  []string
			late  []string
		}{
			{
				name: "at the top, with lateness",
				plan: plan.Join{Interval: true, Lower: -5, Upper: 10, Lateness: 1000},
				steps: []optest.JoinStep{
					optest.JoinStep(fmt.Sprintf("L a@%d l1", int64(maxTs-3))),
					optest.JoinStep(fmt.Sprintf("R a@%d r1; a@%d r2", int64(maxTs), int64(maxTs-8))),
					optest.JoinStep(fmt.Sprintf("wm %d", int64(maxTs-1))),
					optest.JoinStep(fmt.Sprintf("L a@%d l2", int64(maxTs))),
					"wm max",
				},
				want: []string{
					fmt.Sprintf(`a@%d {"key":"a","left":l1,"right":r1}`, int64(maxTs)),
					fmt.Sprintf(`a@%d {"key":"a","left":l1,"right":r2}`, int64(maxTs-3)),
					fmt.Sprintf("wm %d", int64(maxTs-1)),
					fmt.Sprintf(`a@%d {"key":"a","left":l2,"right":r1}`, int64(maxTs)),
					"wm max",
				},
				late: []string{fmt.Sprintf("wm %d", int64(maxTs-1)), "wm max"},
			},
			{
				name: "at the bottom",
				plan: plan.Join{Interval: true, Lower: -5, Upper: 10},
				steps: []optest.JoinStep{
					optest.JoinStep(fmt.Sprintf("R a@%d r1", int64(minTs))),
					optest.JoinStep(fmt.Sprintf("L a@%d l1; a@%d l2", int64(minTs), int64(minTs+5))),
					optest.JoinStep(fmt.Sprintf("wm %d", int64(minTs+6))),
					optest.JoinStep(fmt.Sprintf("R a@%d r2; a@%d r3", int64(minTs+5), int64(minTs+4))),
					"wm max",
				},
				want: []string{
					fmt.Sprintf(`a@%d {"key":"a","left":l1,"right":r1}`, int64(minTs)),
					fmt.Sprintf(`a@%d {"key":"a","left":l2,"right":r1}`, int64(minTs+5)),
					fmt.Sprintf("wm %d", int64(minTs+6)),
					"wm max",
				},
				late: []string{fmt.Sprintf("wm %d", int64(minTs+6)),
					fmt.Sprintf("a@%d r2", int64(minTs+5)), fmt.Sprintf("a@%d r3", int64(minTs+4)), "wm max"},
			},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				out, late := &optest.Tape{}, &optest.Tape{}
				j, _ := testIntervalJoin(&tc.plan, 1<<20, out, late)
				for _, st := range tc.steps {
					if err := st.Apply(context.Background(), j, j.inputs); err != nil {
						t.Fatalf("%s: %v", st, err)
					}
				}
				optest.CheckLines(t, "output", out.Lines, tc.want)
				optest.CheckLines(t, "late", late.Lines, tc.late)
				if l, r := j.buffered(); l != 0 || r != 0 || j.used != 0 {
					t.Errorf("after the last watermark: %d left, %d right, %d bytes; want none", l, r, j.used)
				}
			})
		}
	})
}
