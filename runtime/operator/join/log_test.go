package join

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/watermark"
)

// TestIntervalJoinOutOfOrder joins records that come out of order, within a
// bound the watermark lags by, and checks the pairs against every pair of
// the records in the interval: with logs, with indexes, and with logs that
// turn into indexes halfway. A log keeps time order, so the pairs of a
// record may come in another order than an index gives them; the test
// compares them as sets.
func TestIntervalJoinOutOfOrder(t *testing.T) {
	const lower, upper, disorder = -20, 10, 15
	for _, mode := range []string{"log", "indexed", "log, then indexed"} {
		t.Run(mode, func(t *testing.T) {
			jp := &plan.Join{Interval: true, Lower: lower, Upper: upper}
			out := &optest.Tape{}
			j, c := testIntervalJoin(jp, 1<<40, out, nil)
			if mode == "indexed" {
				j.index(0)
				j.index(1)
			}
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(3, 5))
			var all []testRec
			var want []string
			const batches = 400
			for batch := range batches {
				if mode == "log, then indexed" && batch == batches/2 {
					j.index(0)
					j.index(1)
				}
				side := rng.IntN(2)
				j.inputs.From(side)
				var recs []abi.Record
				for range 1 + rng.IntN(6) {
					r := testRec{side: side, key: fmt.Sprintf("k%d", rng.IntN(4)), ts: int64(batch) - rng.Int64N(disorder+1), value: fmt.Sprint(len(all))}
					want = wantPairs(want, r, all, lower, upper)
					all = append(all, r)
					recs = append(recs, abi.Record{Key: []byte(r.key), Value: []byte(r.value), Timestamp: r.ts})
				}
				if err := j.Process(ctx, recs); err != nil {
					t.Fatal(err)
				}
				if err := j.Advance(ctx, int64(batch)-disorder-1); err != nil {
					t.Fatal(err)
				}
			}
			if err := j.Advance(ctx, watermark.MaxWatermark); err != nil {
				t.Fatal(err)
			}
			if n := c.late.Load(); n != 0 {
				t.Fatalf("%d records late", n)
			}
			var got []string
			for _, line := range out.Lines {
				if line[0] != 'w' { // not a watermark
					got = append(got, line)
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("%d pairs, want %d; first difference:\n%s", len(got), len(want), firstDifference(got, want))
			}
			if l, r := j.buffered(); l != 0 || r != 0 || j.used != 0 {
				t.Errorf("after the last watermark: %d left, %d right, %d bytes; want none", l, r, j.used)
			}
		})
	}
}

// TestIntervalJoinSideIndexesWhenSearchesCost checks when a side turns
// from a log into an index: a side whose searches look at about one record
// per record buffered keeps its log, as the bids of Nexmark's q7 do; one
// whose searches look at many turns into an index once they passed
// logWorkPerAdd per record plus logWorkFloor, and matches as before.
func TestIntervalJoinSideIndexesWhenSearchesCost(t *testing.T) {
	ctx := context.Background()
	newJoin := func(lower, upper int64) (*Interval, *discardCounter) {
		out := &discardCounter{}
		c := newCounters()
		return newIntervalJoin("join", &plan.Join{Interval: true, Lower: lower, Upper: upper}, &operator.Inputs{Split: 1}, 1<<40, &c.late, &operator.Out{Max: 256, Next: out}, nil), out
	}
	// rights buffers n right records at ts, the i-th keyed k((ts+i) mod 100).
	rights := func(j *Interval, n int, ts int64) {
		t.Helper()
		j.inputs.From(1)
		recs := make([]abi.Record, n)
		for i := range recs {
			recs[i] = abi.Record{Key: []byte(fmt.Sprint("k", (int(ts)+i)%100)), Value: []byte("1"), Timestamp: ts}
		}
		if err := j.Process(ctx, recs); err != nil {
			t.Fatal(err)
		}
	}
	left := func(j *Interval, ts int64) {
		t.Helper()
		j.inputs.From(0)
		if err := j.Process(ctx, []abi.Record{{Key: []byte("k0"), Value: []byte("2"), Timestamp: ts}}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("few searches keep the log", func(t *testing.T) {
		// Each time has 1,000 right records and one left record, which
		// meets the 1,000 of its time; each right record looks at the left
		// records of its time, so the left side turns into an index.
		j, out := newJoin(0, 0)
		for ts := range int64(100) {
			rights(j, 1000, ts)
			left(j, ts)
			if err := j.Advance(ctx, ts-1); err != nil {
				t.Fatal(err)
			}
		}
		if j.sides[1].indexed() || !j.sides[0].indexed() {
			t.Errorf("indexed: left %v, right %v; want the left side only", j.sides[0].indexed(), j.sides[1].indexed())
		}
		if out.n != 100*10 {
			t.Errorf("%d pairs, want %d", out.n, 100*10)
		}
	})
	t.Run("many searches index", func(t *testing.T) {
		// 2,000 right records that every left record meets: each search
		// looks at 2,001 log entries.
		j, out := newJoin(-10_000, 10_000)
		for ts := range int64(2000) {
			rights(j, 1, ts)
		}
		const searches = (logWorkPerAdd*2000+logWorkFloor)/2001 + 1
		for i := range searches + 10 {
			if got, want := j.sides[1].indexed(), i >= searches; got != want {
				t.Fatalf("after %d searches: right side indexed %v, want %v", i, got, want)
			}
			left(j, 5000)
		}
		// k0 is the key of one right record in 100.
		if want := int64(searches+10) * 20; out.n != want {
			t.Errorf("%d pairs, want %d", out.n, want)
		}
	})
	t.Run("a long cheap past does not delay the index", func(t *testing.T) {
		// 1,000,000 right records nobody searches, then searches that each
		// look at the 2,000 of the last 20 ms: without the counts' decay the
		// side would turn after 8,000 searches.
		j, _ := newJoin(-10, 10)
		for ts := range int64(10_000) {
			rights(j, 100, ts)
			if err := j.Advance(ctx, ts-100); err != nil {
				t.Fatal(err)
			}
		}
		const most = (logWorkPerAdd*logDecayAdds+logWorkFloor)/2001 + 1
		for i := 0; !j.sides[1].indexed(); i++ {
			if i == most {
				t.Fatalf("right side not indexed after %d searches", i)
			}
			left(j, 9_990)
		}
	})
}
