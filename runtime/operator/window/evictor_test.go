package window

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
)

// echo is the window function of udfs/windowkinds-c's summary, which
// writes "<key>:<start>:<end>:<records>" and then each record's value.
func echo(t *testing.T) func(w *Operator, out *operator.Out, policy *operator.ErrorPolicy) windowFunc {
	return udfWindowFunc(t, optest.Module(t, "windowkinds-c"), "summary")
}

// echoed is what echo writes for a window of key with the records values.
func echoed(key string, start, end int64, values ...string) []string {
	lines := []string{fmt.Sprintf("%s@%d %s:%d:%d:%d", key, end-1, key, start, end, len(values))}
	for _, v := range values {
		lines = append(lines, "v@7 "+v)
	}
	return lines
}

func lines(groups ...[]string) []string { return slices.Concat(groups...) }

// evicting is a global window with a count trigger and an evictor.
func evicting(count int64, e plan.Evictor) plan.Window {
	return plan.Window{Type: plan.WindowGlobal, FnKind: abi.KindWindowProcess, Trigger: &plan.Trigger{Type: plan.TriggerCount, Count: count}, Evictor: &e}
}

// TestEvictors drives the window operator with each evictor, before and
// after the window function, and checks the records each firing sees, as
// Flink's EvictingWindowOperatorTest does.
func TestEvictors(t *testing.T) {
	runTriggerCases(t, []triggerCase{
		{
			// Flink's testCountEvictorEvictAfter.
			name: "count, after",
			plan: evicting(2, plan.Evictor{Type: plan.EvictorCount, Max: 4, After: true}),
			steps: []optest.Step{
				"key2@3000 3000; key2@3999 3999", "key1@20 20; key1@0 0; key1@999 999", "key2@1998 1998; key2@1999 1999; key2@1000 1000",
				"key1@10999 10999; key2@1000 1000a", "key2@1000 1000b; key2@1000 1000c", "wm max",
			},
			want: lines(
				echoed("key2", 3000, 4000, "3000", "3999"), echoed("key1", 0, 21, "20", "0"),
				echoed("key2", 1998, 4000, "3000", "3999", "1998", "1999"),
				echoed("key1", 0, 11000, "20", "0", "999", "10999"),
				// Six records, then the first two are evicted.
				echoed("key2", 1000, 4000, "3000", "3999", "1998", "1999", "1000", "1000a"),
				echoed("key2", 1000, 2000, "1998", "1999", "1000", "1000a", "1000b", "1000c"), []string{"wm max"}),
			keys: 2,
		},
		{
			name:  "count, before: a sliding count window",
			plan:  evicting(2, plan.Evictor{Type: plan.EvictorCount, Max: 3}),
			steps: []optest.Step{"k@1 a; k@2 b; k@3 c; k@4 d", "k@5 e; k@6 f", "wm max"},
			want:  lines(echoed("k", 1, 3, "a", "b"), echoed("k", 2, 5, "b", "c", "d"), echoed("k", 4, 7, "d", "e", "f"), []string{"wm max"}),
			keys:  1,
		},
		{
			// Flink's testTimeEvictorEvictBefore: tumbling 4 s windows, a
			// count trigger of 2 and a time evictor of 2 s.
			name: "time, before, over tumbling windows",
			plan: plan.Window{Type: plan.WindowTumbling, Size: 4000, Slide: 4000, FnKind: abi.KindWindowProcess,
				Trigger: &plan.Trigger{Type: plan.TriggerCount, Count: 2}, Evictor: &plan.Evictor{Type: plan.EvictorTime, Size: 2000}},
			steps: []optest.Step{
				"key2@1000 1000; key2@3999 3999", "key1@20 20; key1@0 0; key1@999 999; key1@5999 5999",
				"key2@3500 3500; key2@2001 2001; key2@1001 1001", "key1@6500 6500; key2@1002 1002", "wm max",
			},
			want: lines(
				echoed("key2", 0, 4000, "3999"), echoed("key1", 0, 4000, "20", "0"),
				echoed("key2", 0, 4000, "3999", "3500", "2001"),
				echoed("key1", 4000, 8000, "5999", "6500"),
				echoed("key2", 0, 4000, "3999", "3500", "2001"), []string{"wm max"}),
		},
		{
			// Flink's testTimeEvictorEvictAfter.
			name: "time, after",
			plan: evicting(2, plan.Evictor{Type: plan.EvictorTime, Size: 2000, After: true}),
			steps: []optest.Step{
				"key2@1000 1000; key2@4000 4000", "key1@20 20; key1@0 0; key1@999 999",
				"key2@3500 3500; key2@2001 2001; key2@1001 1001", "key1@10999 10999; key2@1002 1002", "wm max",
			},
			want: lines(
				echoed("key2", 1000, 4001, "1000", "4000"), echoed("key1", 0, 21, "20", "0"),
				echoed("key2", 2001, 4001, "4000", "3500", "2001"),
				echoed("key1", 0, 11000, "20", "0", "999", "10999"),
				echoed("key2", 1001, 4001, "4000", "3500", "2001", "1001", "1002"), []string{"wm max"}),
			keys: 2,
		},
		{
			name: "delta, before",
			plan: evicting(2, plan.Evictor{Type: plan.EvictorDelta, Threshold: 2, Field: "n"}),
			steps: []optest.Step{
				`k@1 {"n":1}; k@2 {"n":2}`, `k@3 {"n":5}; k@4 {"n":4}`, `k@5 {"n":10}; k@6 {"n":9}`, "wm max",
			},
			// |1 - 4| and |2 - 4| are not less than 2.
			want: lines(echoed("k", 1, 3, `{"n":1}`, `{"n":2}`), echoed("k", 3, 5, `{"n":5}`, `{"n":4}`),
				echoed("k", 5, 7, `{"n":10}`, `{"n":9}`), []string{"wm max"}),
			keys: 1,
		},
		{
			name: "delta, after",
			plan: evicting(2, plan.Evictor{Type: plan.EvictorDelta, Threshold: 2, Field: "n", After: true}),
			steps: []optest.Step{
				`k@1 {"n":1}; k@2 {"n":2}`, `k@3 {"n":5}; k@4 {"n":4.5}`, `k@5 {"n":10}; k@6 {"n":9}`, "wm max",
			},
			want: lines(echoed("k", 1, 3, `{"n":1}`, `{"n":2}`), echoed("k", 1, 5, `{"n":1}`, `{"n":2}`, `{"n":5}`, `{"n":4.5}`),
				echoed("k", 3, 7, `{"n":5}`, `{"n":4.5}`, `{"n":10}`, `{"n":9}`), []string{"wm max"}),
			keys: 1,
		},
		{
			name:  "count, before, with the default trigger of tumbling windows",
			plan:  plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Lateness: 5, FnKind: abi.KindWindowProcess, Evictor: &plan.Evictor{Type: plan.EvictorCount, Max: 2}},
			steps: []optest.Step{"k@1 a; k@5 b; k@3 c; k@12 d", "wm 9", "k@2 e", "wm max"},
			// The late record re-fires the window, which kept 2 records.
			want: lines(echoed("k", 0, 10, "b", "c"), []string{"wm 9"}, echoed("k", 0, 10, "c", "e"), echoed("k", 10, 20, "d"), []string{"wm max"}),
		},
		{
			name:  "time, before, over sessions",
			plan:  plan.Window{Type: plan.WindowSession, Gap: 10, FnKind: abi.KindWindowProcess, Evictor: &plan.Evictor{Type: plan.EvictorTime, Size: 5}},
			steps: []optest.Step{"k@0 a; k@8 b; k@30 c", "k@15 d", "wm max"},
			// [0,18) and [15,25) merge into [0,25), whose latest record
			// is at 15: only what is after 10 stays.
			want: lines(echoed("k", 0, 25, "d"), echoed("k", 30, 40, "c"), []string{"wm max"}),
		},
		{
			name: "count, before, with a purging count trigger",
			plan: plan.Window{Type: plan.WindowGlobal, FnKind: abi.KindWindowProcess, Trigger: &plan.Trigger{Type: plan.TriggerCount, Count: 3, Purge: true},
				Evictor: &plan.Evictor{Type: plan.EvictorCount, Max: 1}},
			steps: []optest.Step{"k@1 a; k@2 b; k@3 c; k@4 d", "k@5 e; k@6 f", "wm max"},
			want:  lines(echoed("k", 3, 4, "c"), echoed("k", 6, 7, "f"), []string{"wm max"}),
		},
	}, echo)
}

// TestEvictorDeltaField: a record without the delta evictor's number is a
// failed record, in no window.
func TestEvictorDeltaField(t *testing.T) {
	wp := evicting(1, plan.Evictor{Type: plan.EvictorDelta, Threshold: 1, Field: "n"})
	out := &optest.Tape{}
	w, c := testWindow(&wp, echo(t), out, nil)
	w.policy.Mode = operator.OnErrorSkip
	optest.Run(t, w, []optest.Step{`k@1 {"n":"x"}; k@2 {"m":1}; k@3 {"n":3}`, "wm max"})
	optest.CheckLines(t, "results", out.Lines, lines(echoed("k", 3, 4, `{"n":3}`), []string{"wm max"}))
	if n := c.Skipped.Load(); n != 2 {
		t.Fatalf("%d records skipped, want 2", n)
	}
	w.policy.Mode = operator.OnErrorFail
	err := optest.Step(`k@4 {"n":true}`).Apply(context.Background(), w)
	if err == nil || !strings.Contains(err.Error(), `evictor delta field "n"`) {
		t.Fatalf("error %v, want one naming the evictor's field", err)
	}
}

// TestSlidingCountWindowsAreGlobal: a sliding count window {count: N,
// count_slide: S} is a global window with a count trigger of S and a count
// evictor of N before the window function, as Flink's countWindow(N, S).
func TestSlidingCountWindowsAreGlobal(t *testing.T) {
	for trial := range 40 {
		rng := rand.New(rand.NewPCG(uint64(trial), 13))
		size := int64(1 + rng.IntN(5))
		slide := int64(1 + rng.IntN(int(size)))
		var steps []optest.Step
		for range 3 + rng.IntN(8) {
			var batch []string
			for range 1 + rng.IntN(8) {
				batch = append(batch, fmt.Sprintf("%c@%d v%d", 'a'+rng.IntN(3), rng.IntN(100), rng.IntN(1000)))
			}
			steps = append(steps, optest.Step(strings.Join(batch, "; ")))
		}
		steps = append(steps, "wm max")
		run := func(wp plan.Window) []string {
			out := &optest.Tape{}
			w, _ := testWindow(&wp, echo(t), out, nil)
			optest.Run(t, w, steps)
			return out.Lines
		}
		counted := run(plan.Window{Type: plan.WindowCount, Count: size, CountSlide: slide, FnKind: abi.KindWindowProcess})
		globalled := run(evicting(slide, plan.Evictor{Type: plan.EvictorCount, Max: size}))
		if !slices.Equal(counted, globalled) {
			t.Fatalf("trial %d (count %d, slide %d):\ncount window:\n%s\nglobal window:\n%s", trial, size, slide,
				strings.Join(counted, "\n"), strings.Join(globalled, "\n"))
		}
	}
}

// TestEncodedRecord: the evictor reads back what frames encode, headers
// included, and refuses what is cut short.
func TestEncodedRecord(t *testing.T) {
	var full []byte
	ends := map[int]bool{0: true}
	for i, v := range []string{"a", "bb", ""} {
		r := abi.Record{Key: []byte("k"), Value: []byte(v), Timestamp: int64(i)}
		for range i {
			r.Headers = append(r.Headers, abi.Header{Name: []byte("h"), Value: []byte("x")})
		}
		full = abi.AppendRecord(full, &r)
		ends[len(full)] = true
	}
	var got []string
	for d := full; len(d) > 0; {
		n, v, ts, err := encodedRecord(d)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(v)+"@"+strconv.FormatInt(ts, 10))
		d = d[n:]
	}
	if want := []string{"a@0", "bb@1", "@2"}; !slices.Equal(got, want) {
		t.Fatalf("records %q, want %q", got, want)
	}
	for cut := range len(full) {
		var err error
		for d := full[:cut]; len(d) > 0 && err == nil; {
			var n int
			n, _, _, err = encodedRecord(d)
			d = d[n:]
		}
		if (err == nil) != ends[cut] {
			t.Fatalf("cut at %d: error %v", cut, err)
		}
	}
}
