package window

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/watermark"
)

// propRecord is a generated record: its key, timestamp and number.
type propRecord struct {
	key string
	ts  int64
	n   int64
}

// refAgg computes a built-in aggregate over numbers the way windowOut
// formats it.
func refAgg(name string, ns []int64) string {
	acc := builtinAcc{}
	for _, n := range ns {
		acc.add(float64(n))
	}
	f := builtinFunc{name: name}
	return string(f.result(&acc))
}

// refTimeWindows is the brute-force reference of tumbling and sliding
// windows with bounded-out-of-orderness watermarks after every record and
// allowed lateness: every record is kept once per window, and every window
// is checked at every watermark. It returns the results as "key start end
// value" lines and the number of records too late.
func refTimeWindows(recs []propRecord, size, slide, lateness, delay int64, agg string) ([]string, int64) {
	type win struct {
		key   string
		start int64
	}
	contents := map[win][]int64{}
	var out []string
	emit := func(w win) {
		out = append(out, fmt.Sprintf("%s %d %d %s", w.key, w.start, w.start+size, refAgg(agg, contents[w])))
	}
	wm, maxTs := int64(abi.NoWatermark), int64(math.MinInt64)
	var late int64
	fireUpTo := func(next int64) {
		var due []win
		for w := range contents {
			if end := w.start + size - 1; end > wm && end <= next {
				due = append(due, w)
			}
		}
		for _, w := range due {
			emit(w)
		}
		wm = next
	}
	for _, r := range recs {
		var starts []int64
		for s := r.ts - floorMod(r.ts, slide); s > r.ts-size; s -= slide {
			starts = append(starts, s)
		}
		live := false
		for _, s := range starts {
			if s+size-1+lateness > wm {
				live = true
				w := win{r.key, s}
				contents[w] = append(contents[w], r.n)
				if s+size-1 <= wm {
					emit(w)
				}
			}
		}
		if !live {
			late++
		}
		maxTs = max(maxTs, r.ts)
		if next := maxTs - delay - 1; next > wm {
			fireUpTo(next)
		}
	}
	fireUpTo(watermark.MaxWatermark)
	return out, late
}

// refSessions is the brute-force reference of session windows with
// bounded-out-of-orderness watermarks after every record and allowed
// lateness, merging first and deciding lateness on the merged session (as
// Flink's MergingWindowSet): a record's window [t, t+gap) merges with every
// live session of its key it intersects or touches, over and over until none
// is left; the record is late only when the merged session is past the
// allowed lateness. A merged session already due fires again at once; every
// session is checked at every watermark.
func refSessions(recs []propRecord, gap, lateness, delay int64, agg string) ([]string, int64) {
	type session struct {
		start, end int64
		ns         []int64
	}
	live := map[string][]session{}
	var out []string
	emit := func(key string, s session) {
		out = append(out, fmt.Sprintf("%s %d %d %s", key, s.start, s.end, refAgg(agg, s.ns)))
	}
	wm, maxTs := int64(abi.NoWatermark), int64(math.MinInt64)
	var late int64
	advance := func(next int64) {
		for key, ss := range live {
			var kept []session
			for _, s := range ss {
				if s.end-1 > wm && s.end-1 <= next {
					emit(key, s)
				}
				if s.end-1 > next-lateness {
					kept = append(kept, s)
				}
			}
			live[key] = kept
		}
		wm = next
	}
	for _, r := range recs {
		merged := session{start: r.ts, end: r.ts + gap, ns: []int64{r.n}}
		rest := live[r.key]
		for changed := true; changed; {
			changed = false
			var others []session
			for _, s := range rest {
				if s.start <= merged.end && s.end >= merged.start {
					merged.start, merged.end = min(merged.start, s.start), max(merged.end, s.end)
					merged.ns = append(merged.ns, s.ns...)
					changed = true
				} else {
					others = append(others, s)
				}
			}
			rest = others
		}
		if merged.end-1+lateness <= wm {
			late++
		} else {
			live[r.key] = append(rest, merged)
			if merged.end-1 <= wm {
				emit(r.key, merged)
			}
		}
		maxTs = max(maxTs, r.ts)
		if next := maxTs - delay - 1; next > wm {
			advance(next)
		}
	}
	advance(watermark.MaxWatermark)
	return out, late
}

// refCountWindows is the reference of count windows: every slide records of
// a key, the last size of them.
func refCountWindows(recs []propRecord, size, slide int64, agg string) []string {
	seen := map[string][]propRecord{}
	var out []string
	for _, r := range recs {
		rs := append(seen[r.key], r)
		seen[r.key] = rs
		if int64(len(rs))%slide != 0 {
			continue
		}
		last := rs[max(0, len(rs)-int(size)):]
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		var ns []int64
		for _, x := range last {
			lo, hi = min(lo, x.ts), max(hi, x.ts+1)
			ns = append(ns, x.n)
		}
		out = append(out, fmt.Sprintf("%s %d %d %s", r.key, lo, hi, refAgg(agg, ns)))
	}
	return out
}

// resultSink turns built-in results back into "key start end value" lines.
type resultSink struct {
	optest.Tape
	results []string
}

func (s *resultSink) Process(_ context.Context, recs []abi.Record) error {
	for _, r := range recs {
		var start, end, value []byte
		var err error
		if start, _, err = operator.JSONField(r.Value, "window_start", nil); err == nil {
			if end, _, err = operator.JSONField(r.Value, "window_end", nil); err == nil {
				value, _, err = operator.JSONField(r.Value, "value", nil)
			}
		}
		if err != nil {
			return err
		}
		s.results = append(s.results, fmt.Sprintf("%s %s %s %s", r.Key, start, end, value))
	}
	return nil
}

// TestWindowProperty compares the window operator behind a watermark
// generator (interval 0) with the brute-force references on random input
// cut into random batches.
func TestWindowProperty(t *testing.T) {
	aggs := []string{builtinCount, builtinSum, builtinMin, builtinMax, builtinAvg}
	for trial := 0; trial < 300; trial++ {
		rng := rand.New(rand.NewPCG(uint64(trial), 7))
		slide := []int64{5, 10, 20}[rng.IntN(3)]
		size := slide * int64(1+rng.IntN(4))
		wp := plan.Window{Type: plan.WindowSliding, Size: size, Slide: slide, Lateness: []int64{0, 0, 15, 40}[rng.IntN(4)],
			Builtin: aggs[rng.IntN(len(aggs))], Field: "n"}
		if trial%4 == 2 {
			// Sessions: records up to 60 ms out of order against a delay
			// below 30 ms reach into sessions that are still open.
			wp = plan.Window{Type: plan.WindowSession, Gap: []int64{3, 10, 25}[rng.IntN(3)], Lateness: wp.Lateness, Builtin: wp.Builtin, Field: "n"}
		}
		if trial%4 == 3 {
			wp = plan.Window{Type: plan.WindowCount, Count: int64(1 + rng.IntN(5)), Builtin: wp.Builtin, Field: "n"}
			wp.CountSlide = []int64{wp.Count, 1, 2}[rng.IntN(3)]
			if wp.Count%wp.CountSlide != 0 {
				wp.CountSlide = wp.Count
			}
		}
		delay := int64(rng.IntN(30))
		recs := make([]propRecord, 100+rng.IntN(200))
		clock := int64(1000)
		for i := range recs {
			clock += int64(rng.IntN(8))
			recs[i] = propRecord{key: string(rune('a' + rng.IntN(4))), ts: clock - int64(rng.IntN(60)), n: int64(rng.IntN(200)) - 100}
		}
		var want []string
		var wantLate int64
		switch wp.Type {
		case plan.WindowCount:
			want = refCountWindows(recs, wp.Count, wp.CountSlide, wp.Builtin)
		case plan.WindowSession:
			want, wantLate = refSessions(recs, wp.Gap, wp.Lateness, delay, wp.Builtin)
		default:
			want, wantLate = refTimeWindows(recs, wp.Size, wp.Slide, wp.Lateness, delay, wp.Builtin)
		}

		slices.Sort(want)
		runs := []plan.Window{wp}
		if wp.Type != plan.WindowCount {
			// The default trigger, given: the triggered windows' path
			// (triggered.go) must agree with the panes'.
			explicit := wp
			explicit.Trigger = &plan.Trigger{Type: plan.TriggerEventTime}
			runs = append(runs, explicit)
		}
		for _, wp := range runs {
			got, late := runProperty(t, wp, recs, delay, rand.New(rand.NewPCG(uint64(trial), 8)))
			if !slices.Equal(got, want) || late != wantLate {
				t.Fatalf("trial %d (%+v, trigger %v, delay %d): late %d, want %d\n got %d results %v\nwant %d results %v",
					trial, wp, wp.Trigger, delay, late, wantLate, len(got), got, len(want), want)
			}
		}
	}
}

// runProperty runs a window operator with a built-in aggregate over recs
// behind a bounded-out-of-orderness watermark generator, in random batches,
// and returns its results sorted and its count of late records.
func runProperty(t *testing.T, wp plan.Window, recs []propRecord, delay int64, rng *rand.Rand) ([]string, int64) {
	t.Helper()
	out := &resultSink{}
	c := newCounters()
	policy := &operator.ErrorPolicy{Mode: operator.OnErrorFail, Vertex: "win", Counts: &c.ErrorCounts, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	wo := &operator.Out{Max: 1 + rng.IntN(8), Next: out}
	w := newWindowOp("win", &wp, &c.late, policy, wo, nil)
	w.fn = &builtinFunc{name: wp.Builtin, field: "n", policy: policy, out: wo}
	gen := watermark.NewGenerator(watermark.Bounded, delay, 0, 0, func(context.Context, bool) error { return nil }, w)
	gen.SetSplits(1)
	ctx := context.Background()
	for lo := 0; lo < len(recs); {
		hi := min(len(recs), lo+1+rng.IntN(40))
		batch := make([]abi.Record, 0, hi-lo)
		for _, r := range recs[lo:hi] {
			batch = append(batch, abi.Record{Key: []byte(r.key), Value: []byte(`{"n":` + strconv.FormatInt(r.n, 10) + `}`), Timestamp: r.ts})
		}
		if err := gen.Process(ctx, batch); err != nil {
			t.Fatal(err)
		}
		lo = hi
	}
	if err := gen.Advance(ctx, watermark.MaxWatermark); err != nil {
		t.Fatal(err)
	}
	if wp.Type != plan.WindowCount && w.store.keys() != 0 {
		t.Fatalf("%+v: %d keys left after the end of input", wp, w.store.keys())
	}
	got := slices.Clone(out.results)
	slices.Sort(got)
	return got, c.late.Load()
}
