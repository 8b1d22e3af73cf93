package window

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"wasmstream.io/platform/internal/snapenc"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
)

// snapshotBytes is an operator's snapshot without per-window state.
func snapshotBytes(t *testing.T, w *Operator) []byte {
	t.Helper()
	blob, err := w.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if blob.Data == nil {
		t.Fatal("the snapshot has a keyed state part")
	}
	return blob.Data
}

// subtaskRun is a window operator subtask of p over the key groups of
// subtask i, and what it wrote.
type subtaskRun struct {
	w     *Operator
	out   *optest.Tape
	clock *optest.Clock
	rng   state.Range
}

// newSubtasks makes p subtasks of wp, restored from snaps when given.
func newSubtasks(t *testing.T, wp plan.Window, p int, snaps [][]byte) []*subtaskRun {
	t.Helper()
	var runs []*subtaskRun
	for i := range p {
		r := &subtaskRun{out: &optest.Tape{}, clock: &optest.Clock{}, rng: state.RangeOf(128, p, i)}
		plan := wp
		r.w, _ = testWindow(&plan, nil, r.out, nil)
		r.w.clock = r.clock.Read
		if snaps != nil {
			var srcs []io.Reader
			for _, s := range snaps {
				srcs = append(srcs, bytes.NewReader(s))
			}
			if err := r.w.Restore(context.Background(), srcs, 128, r.rng); err != nil {
				t.Fatal(err)
			}
		}
		runs = append(runs, r)
	}
	return runs
}

// feed gives each subtask the steps, records only of the keys its key
// groups hold, and the clock's steps.
func feed(t *testing.T, runs []*subtaskRun, steps []optest.Step) {
	t.Helper()
	for _, st := range steps {
		text := string(st)
		if strings.HasPrefix(text, "wm ") || strings.HasPrefix(text, "tick ") || strings.HasPrefix(text, "at ") {
			for _, r := range runs {
				optest.RunClock(t, r.w, r.clock, []optest.Step{st})
			}
			continue
		}
		for _, r := range runs {
			var mine []string
			for _, one := range strings.Split(text, ";") {
				key, _, _ := strings.Cut(strings.TrimSpace(one), "@")
				if r.rng.Contains(state.KeyGroup([]byte(key), 128)) {
					mine = append(mine, one)
				}
			}
			if len(mine) > 0 {
				optest.RunClock(t, r.w, r.clock, []optest.Step{optest.Step(strings.Join(mine, ";"))})
			}
		}
	}
}

// results are the records the subtasks wrote, sorted.
func results(runs []*subtaskRun) []string {
	var got []string
	for _, r := range runs {
		for _, l := range r.out.Lines {
			if !strings.HasPrefix(l, "wm ") {
				got = append(got, l)
			}
		}
	}
	slices.Sort(got)
	return got
}

// TestTriggerSnapshotRestore: a snapshot taken mid-window, with trigger
// state (counts, fire times) and pending timers of both clocks, restored
// into one subtask or split over two, goes on as if nothing happened.
func TestTriggerSnapshotRestore(t *testing.T) {
	tests := []struct {
		name          string
		plan          plan.Window
		before, after []optest.Step
	}{
		{
			name:   "count, purging",
			plan:   tumbling(10, 0, plan.Trigger{Type: plan.TriggerCount, Count: 3, Purge: true}),
			before: []optest.Step{"a@1 x; b@2 x; a@3 x; c@1 x; c@2 x; c@3 x; c@4 x"},
			after:  []optest.Step{"a@4 x; b@5 x; b@6 x", "c@5 x; c@6 x", "wm max"},
		},
		{
			name:   "continuous event time with a fire time pending",
			plan:   tumbling(100, 20, plan.Trigger{Type: plan.TriggerContinuousEventTime, Interval: 10}),
			before: []optest.Step{"a@5 x; b@17 x; c@33 x", "wm 12"},
			after:  []optest.Step{"wm 20", "a@6 x", "wm 35", "wm 99", "b@1 x", "wm max"},
		},
		{
			name:   "processing time on event-time windows, a timer due",
			plan:   tumbling(10, 0, plan.Trigger{Type: plan.TriggerProcessingTime}),
			before: []optest.Step{"at 0", "a@1 x; b@2 x; c@15 x", "tick 9", "a@3 x"},
			after:  []optest.Step{"tick 10", "tick 19", "wm max"},
		},
		{
			name:   "continuous processing time",
			plan:   tumbling(1000, 0, plan.Trigger{Type: plan.TriggerContinuousProcessingTime, Interval: 100, Purge: true}),
			before: []optest.Step{"at 50", "a@1 x; b@2 x", "tick 100", "at 130", "a@3 x; c@4 x"},
			after:  []optest.Step{"tick 199", "tick 200", "b@5 x", "tick 350", "wm max"},
		},
		{
			name:   "sessions with a count trigger",
			plan:   plan.Window{Type: plan.WindowSession, Gap: 10, Builtin: builtinCount, Trigger: &plan.Trigger{Type: plan.TriggerCount, Count: 3}},
			before: []optest.Step{"a@0 x; a@20 x; b@0 x; b@5 x"},
			after:  []optest.Step{"a@10 x; b@9 x", "wm max"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			whole := newSubtasks(t, tt.plan, 1, nil)
			feed(t, whole, append(slices.Clone(tt.before), tt.after...))
			want := results(whole)
			if len(want) == 0 {
				t.Fatal("the case fires nothing")
			}
			for _, p := range []int{1, 2} {
				first := newSubtasks(t, tt.plan, 1, nil)
				feed(t, first, tt.before)
				snap := snapshotBytes(t, first[0].w)
				then := newSubtasks(t, tt.plan, p, [][]byte{snap})
				clock := first[0].clock.Now
				for _, r := range then {
					r.clock.Now = clock
				}
				feed(t, then, tt.after)
				got := append(results(first), results(then)...)
				slices.Sort(got)
				optest.CheckLines(t, "results restored into parallelism "+string(rune('0'+p)), got, want)
			}
		})
	}
}

// encodeV2 writes the window snapshot of version 2 (before triggers: no
// triggered byte, trigger state or timers), as a checkpoint of that
// version holds it.
func encodeV2(w *Operator) []byte {
	b := append([]byte(windowMagic), 2)
	b = binary.LittleEndian.AppendUint64(b, uint64(w.wm))
	b = binary.LittleEndian.AppendUint64(b, uint64(w.lastTick))
	store := w.store.(*windowStore)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(store.byKey)))
	for _, ks := range store.byKey {
		b = snapenc.AppendBytes(b, ks.key)
		b = binary.LittleEndian.AppendUint64(b, uint64(ks.fired))
		b = binary.LittleEndian.AppendUint64(b, uint64(ks.arrived))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(ks.slots)))
		for _, s := range ks.slots {
			for _, v := range []int64{s.start, s.end, s.n, s.agg.count} {
				b = binary.LittleEndian.AppendUint64(b, uint64(v))
			}
			for _, f := range []float64{s.agg.sum, s.agg.min, s.agg.max} {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
			}
			b = snapenc.AppendBytes(append(b, boolByte(s.has)), s.data)
		}
	}
	return append(b, 0)
}

// TestWindowSnapshotVersion2: snapshots from before triggers restore into
// windows with the default trigger, which go on as if nothing happened.
func TestWindowSnapshotVersion2(t *testing.T) {
	for _, wp := range []plan.Window{
		{Type: plan.WindowSliding, Size: 20, Slide: 10, Lateness: 5, Builtin: builtinCount},
		{Type: plan.WindowSession, Gap: 10, Builtin: builtinCount},
		{Type: plan.WindowCount, Count: 3, CountSlide: 1, Builtin: builtinCount},
	} {
		before := []optest.Step{"a@1 x; b@12 x; a@15 x", "wm 9", "a@3 x"}
		after := []optest.Step{"a@16 x; b@30 x", "wm 25", "b@14 x", "wm max"}
		whole := newSubtasks(t, wp, 1, nil)
		feed(t, whole, append(slices.Clone(before), after...))
		first := newSubtasks(t, wp, 1, nil)
		feed(t, first, before)
		then := newSubtasks(t, wp, 1, [][]byte{encodeV2(first[0].w)})
		feed(t, then, after)
		got := append(results(first), results(then)...)
		slices.Sort(got)
		optest.CheckLines(t, wp.Type+" restored from version 2", got, results(whole))
	}
}

// TestWindowSnapshotTriggerChanged: windows kept for one kind of trigger
// do not restore into the other.
func TestWindowSnapshotTriggerChanged(t *testing.T) {
	plain := plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Builtin: builtinCount}
	counted := tumbling(10, 0, plan.Trigger{Type: plan.TriggerCount, Count: 2})
	for _, tc := range []struct {
		from, to plan.Window
		want     string
	}{
		{plain, counted, "its windows were kept for the default trigger"},
		{counted, plain, "its windows were kept for a trigger or an evictor"},
	} {
		first := newSubtasks(t, tc.from, 1, nil)
		feed(t, first, []optest.Step{"a@1 x"})
		to := tc.to
		w, _ := testWindow(&to, nil, &optest.Tape{}, nil)
		err := w.Restore(context.Background(), []io.Reader{bytes.NewReader(snapshotBytes(t, first[0].w))}, 128, state.RangeOf(128, 1, 0))
		if err == nil || !strings.HasPrefix(err.Error(), "operator[win]: window snapshot 0: "+tc.want) {
			t.Errorf("restore: %v, want %q", err, tc.want)
		}
	}
}

// encodeV3 writes the window snapshot of version 3 (before custom
// triggers: no custom trigger state in the slots), as a checkpoint of that
// version holds it.
func encodeV3(w *Operator) []byte {
	b := append([]byte(windowMagic), 3)
	b = binary.LittleEndian.AppendUint64(b, uint64(w.wm))
	b = binary.LittleEndian.AppendUint64(b, uint64(w.lastTick))
	b = append(b, boolByte(w.trig != nil))
	store := w.store.(*windowStore)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(store.byKey)))
	for _, ks := range store.byKey {
		b = snapenc.AppendBytes(b, ks.key)
		b = binary.LittleEndian.AppendUint64(b, uint64(ks.fired))
		b = binary.LittleEndian.AppendUint64(b, uint64(ks.arrived))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(ks.slots)))
		for _, s := range ks.slots {
			for _, v := range []int64{s.start, s.end, s.n, s.agg.count} {
				b = binary.LittleEndian.AppendUint64(b, uint64(v))
			}
			for _, f := range []float64{s.agg.sum, s.agg.min, s.agg.max} {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
			}
			b = snapenc.AppendBytes(append(b, boolByte(s.has)), s.data)
			b = binary.LittleEndian.AppendUint64(b, uint64(s.tstate))
			b = append(b, boolByte(s.hasFire))
		}
	}
	return append(w.appendTimers(b), 0)
}

// TestWindowSnapshotVersion3: snapshots of triggered windows from before
// custom triggers restore, trigger state and timers included.
func TestWindowSnapshotVersion3(t *testing.T) {
	for _, wp := range []plan.Window{
		tumbling(10, 5, plan.Trigger{Type: plan.TriggerCount, Count: 2}),
		{Type: plan.WindowSession, Gap: 10, Builtin: builtinCount, Trigger: &plan.Trigger{Type: plan.TriggerContinuousEventTime, Interval: 3}},
	} {
		before := []optest.Step{"a@1 x; b@12 x; a@15 x", "wm 9", "a@3 x"}
		after := []optest.Step{"a@16 x; b@30 x", "wm 25", "b@14 x", "a@4 x", "wm max"}
		whole := newSubtasks(t, wp, 1, nil)
		feed(t, whole, append(slices.Clone(before), after...))
		first := newSubtasks(t, wp, 1, nil)
		feed(t, first, before)
		then := newSubtasks(t, wp, 1, [][]byte{encodeV3(first[0].w)})
		feed(t, then, after)
		got := append(results(first), results(then)...)
		slices.Sort(got)
		optest.CheckLines(t, wp.Type+" restored from version 3", got, results(whole))
	}
}
