package join

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
)

// TestIntervalJoinKeysComeAndGo drives a join whose keys come and go and
// whose hot keys never empty, with values of many sizes (some too large for
// a slab), and checks every pair against all pairs of the records in the
// interval, in arrival order.
func TestIntervalJoinKeysComeAndGo(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		const lower, upper = -50, 30
		jp := &plan.Join{Interval: true, Lower: lower, Upper: upper}
		out := &optest.Tape{}
		j, c := testIntervalJoin(jp, 1<<40, out, nil)
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(7, 11))

		var all []testRec
		var want []string
		for batch := range 1000 {
			side := batch % 2
			j.inputs.From(side)
			var recs []abi.Record
			for i := range 10 {
				key := fmt.Sprintf("cold-%d", rng.IntN(500))
				if rng.IntN(3) > 0 {
					key = fmt.Sprintf("hot-%d", rng.IntN(2))
				}
				r := testRec{side: side, key: key, ts: int64(batch*10+i) / 4, value: fmt.Sprintf(`"%d-%s"`, len(all), strings.Repeat("v", valueLen(rng)))}
				// Records come in time order: those before lo are of no use.
				first := len(all)
				for first > 0 && all[first-1].ts >= r.ts-(upper-lower) {
					first--
				}
				want = wantPairs(want, r, all[first:], lower, upper)
				all = append(all, r)
				recs = append(recs, abi.Record{Key: []byte(r.key), Value: []byte(r.value), Timestamp: r.ts})
			}
			if err := j.Process(ctx, recs); err != nil {
				t.Fatal(err)
			}
			wm := recs[len(recs)-1].Timestamp - 1
			if err := j.Advance(ctx, wm); err != nil {
				t.Fatal(err)
			}
			want = append(want, fmt.Sprintf("wm %d", wm))
		}
		if n := c.late.Load(); n != 0 {
			t.Fatalf("%d records late", n)
		}
		if got := strings.Join(out.Lines, "\n"); got != strings.Join(want, "\n") {
			t.Fatalf("%d lines, want %d; first difference:\n%s", len(out.Lines), len(want), firstDifference(out.Lines, want))
		}
	})
}

// testRec is a record a test joins, kept to work out the pairs it makes.
type testRec struct {
	side  int
	key   string
	ts    int64
	value string
}

// wantPairs appends the lines of the built-in pairs that r makes, arriving
// after earlier: one with each record of the other side and r's key whose
// time is in the interval.
func wantPairs(want []string, r testRec, earlier []testRec, lower, upper int64) []string {
	for _, o := range earlier {
		left, right := r, o
		if r.side == 1 {
			left, right = o, r
		}
		if o.side == r.side || o.key != r.key || right.ts < left.ts+lower || right.ts > left.ts+upper {
			continue
		}
		want = append(want, fmt.Sprintf(`%s@%d {"key":"%s","left":%s,"right":%s}`, r.key, max(r.ts, o.ts), r.key, left.value, right.value))
	}
	return want
}

// valueLen is mostly short, now and then larger than a slab takes.
func valueLen(rng *rand.Rand) int {
	if rng.IntN(50) == 0 {
		return slabValueBytes + rng.IntN(100)
	}
	return rng.IntN(600)
}

// firstDifference shows where got and want part.
func firstDifference(got, want []string) string {
	for i := range max(len(got), len(want)) {
		g, w := "(none)", "(none)"
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("line %d:\n got %.200s\nwant %.200s", i, g, w)
		}
	}
	return ""
}
