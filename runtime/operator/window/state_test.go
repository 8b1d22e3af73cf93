package window

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/runtime/spec"
	"wasmstream.io/platform/state"
)

// statefulWindow builds a window operator over function fn of the module
// built from udfs/<module> (firings or one of its twins in other languages)
// with per-window state in backend, owning subtask i of p's key groups.
func statefulWindow(t *testing.T, backend string, wp plan.Window, module, fn string, p, i int, out *optest.Tape) *Operator {
	t.Helper()
	wp.States = true
	w, _ := testWindow(&wp, windowStateFunc(t, backend, &wp, module, fn, p, i, 3), out, nil)
	t.Cleanup(func() { _ = w.state.keyed.Close() })
	return w
}

// windowStateFunc makes the window function of function fn of udfs/<module>
// with per-window state in backend, for subtask i of p, with at most
// maxGroups groups per call. Closing the operator closes the state.
func windowStateFunc(tb testing.TB, backend string, wp *plan.Window, module, fn string, p, i, maxGroups int) func(w *Operator, out *operator.Out, policy *operator.ErrorPolicy) windowFunc {
	tb.Helper()
	mod := optest.Module(tb, module)
	descs, err := operator.StateDescriptors(mod.Description, nil)
	if err != nil {
		tb.Fatal(err)
	}
	cfg := state.Config{Backend: backend, MaxParallelism: 128, Range: state.RangeOf(128, p, i), States: descs}
	if backend == state.BackendPebble {
		cfg.Dir = tb.TempDir()
	}
	keyed, err := state.Open(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	st := newWindowState(keyed, len(descs), wp)
	return func(w *Operator, out *operator.Out, policy *operator.ErrorPolicy) windowFunc {
		f := udfWindowFuncGroups(tb, mod, fn, maxGroups)(w, out, policy).(*udfProcessFunc)
		f.state, f.call.State, f.call.Call.Env, w.state = st, st, &st.env, st
		return f
	}
}

// stateCounts are the state entries and cleanup timers the operator's state
// holds, as a snapshot of it writes them.
func stateCounts(t *testing.T, w *Operator) (entries, timers int64) {
	t.Helper()
	ctx := context.Background()
	s, err := w.state.snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	info, err := s.WriteTo(ctx, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return info.Entries, info.Timers
}

// firedState reads the state "fired" of key in window [start, end).
func firedState(t *testing.T, w *Operator, key string, start, end int64) (int, bool) {
	t.Helper()
	k := w.state.keyed
	if err := k.SetKey([]byte(key)); err != nil {
		t.Fatal(err)
	}
	k.SetNamespace(appendWindowNamespace(nil, start, end))
	v, ok, err := k.Value(0)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return 0, false
	}
	return int(v[0]), true
}

var backends = []string{state.BackendMemory, state.BackendPebble}

// A window_process function's state belongs to its key and window: a late
// record within the allowed lateness fires the window again and the
// function sees its first firing's state; the state goes when the window is
// dropped.
func TestWindowStateFirings(t *testing.T) {
	tests := []struct {
		name   string
		plan   plan.Window
		steps  []optest.Step
		want   []string
		before optest.Step
		// gone are the windows whose state must be gone at the end, kept
		// those whose state must be there, with its count.
		gone []string
		kept map[string]int
	}{
		{
			name: "tumbling with allowed lateness",
			plan: plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Lateness: 5},
			steps: []optest.Step{
				"a@1 x; a@3 x; b@4 x; a@12 x", "wm 9", "a@5 x", "a@7 x; b@8 x", "wm 14", "a@6 x", "wm 19",
			},
			want: []string{
				"a@9 a [0,10) firing 1: 2 records", "b@9 b [0,10) firing 1: 1 records", "wm 9",
				"a@9 a [0,10) firing 2: 3 records",
				"a@9 a [0,10) firing 3: 4 records", "b@9 b [0,10) firing 2: 2 records",
				"wm 14", "a@19 a [10,20) firing 1: 1 records", "wm 19",
			},
			gone: []string{"a 0 10", "b 0 10"},
			kept: map[string]int{"a 10 20": 1},
		},
		{
			name: "sliding windows each count their own firings",
			plan: plan.Window{Type: plan.WindowSliding, Size: 20, Slide: 10, Lateness: 10},
			steps: []optest.Step{
				"a@5 x; a@15 x", "wm 19", "a@16 x", "wm 29",
			},
			want: []string{
				"a@9 a [-10,10) firing 1: 1 records", "a@19 a [0,20) firing 1: 2 records", "wm 19",
				"a@19 a [0,20) firing 2: 3 records",
				"a@29 a [10,30) firing 1: 2 records", "wm 29",
			},
			gone: []string{"a -10 10", "a 0 20"},
			kept: map[string]int{"a 10 30": 1},
		},
		{
			name: "a purging count trigger: the state outlives the purges",
			plan: plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Trigger: &plan.Trigger{Type: plan.TriggerCount, Count: 2, Purge: true}},
			steps: []optest.Step{
				"a@1 x; a@2 x; a@3 x", "a@4 x; a@12 x", "wm 9",
			},
			want: []string{
				"a@9 a [0,10) firing 1: 2 records", "a@9 a [0,10) firing 2: 2 records", "wm 9",
			},
			gone: []string{"a 0 10"},
		},
	}
	for _, module := range firingsModules {
		for _, backend := range backends {
			for _, tt := range tests {
				t.Run(module+"/"+backend+"/"+tt.name, func(t *testing.T) {
					out := &optest.Tape{}
					w := statefulWindow(t, backend, tt.plan, module, "count", 1, 0, out)
					optest.Run(t, w, tt.steps)
					optest.CheckLines(t, "output", out.Lines, tt.want)
					for _, win := range tt.gone {
						var key string
						var start, end int64
						fmt.Sscan(win, &key, &start, &end)
						if n, ok := firedState(t, w, key, start, end); ok {
							t.Errorf("window %s kept its state %d after it was dropped", win, n)
						}
					}
					for win, want := range tt.kept {
						var key string
						var start, end int64
						fmt.Sscan(win, &key, &start, &end)
						if n, ok := firedState(t, w, key, start, end); !ok || n != want {
							t.Errorf("window %s: state %d %v, want %d", win, n, ok, want)
						}
					}
					if entries, timers := stateCounts(t, w); entries != int64(len(tt.kept)) || timers != int64(len(tt.kept)) {
						t.Errorf("state holds %d entries and %d cleanup timers, want %d of each", entries, timers, len(tt.kept))
					}
					optest.Run(t, w, []optest.Step{"wm max"})
					if entries, timers := stateCounts(t, w); entries != 0 || timers != 0 {
						t.Errorf("at the end of input the state holds %d entries and %d cleanup timers, want none", entries, timers)
					}
				})
			}
		}
	}
}

// firingsModules are udfs/firings and its twins written with the other
// SDKs: their per-window state must behave alike.
var firingsModules = []string{"firings", "firings-rust", "firings-c", "firings-as"}

// Processing-time windows drop their state when they fire: there is no
// lateness.
func TestWindowStateProcessingTime(t *testing.T) {
	out := &optest.Tape{}
	w := statefulWindow(t, state.BackendMemory, plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Processing: true}, "firings", "count", 1, 0, out)
	now := int64(3)
	w.clock = func() int64 { return now }
	ctx := context.Background()
	optest.Run(t, w, []optest.Step{"a@0 x; b@0 x"})
	if entries, timers := stateCounts(t, w); entries != 0 || timers != 0 {
		t.Fatalf("before the firing: %d entries, %d timers", entries, timers)
	}
	if err := w.Tick(ctx, 9); err != nil {
		t.Fatal(err)
	}
	optest.CheckLines(t, "output", out.Lines, []string{"a@9 a [0,10) firing 1: 1 records", "b@9 b [0,10) firing 1: 1 records"})
	if entries, timers := stateCounts(t, w); entries != 0 || timers != 0 {
		t.Fatalf("after the firing: %d entries, %d timers, want none", entries, timers)
	}
}

// A window_process function may not use timers: its call fails, and so
// does the operator whatever on_udf_error says, since the call may have
// changed state.
func TestWindowStateRefusesTimers(t *testing.T) {
	// firings-rust has no rearm: the Rust SDK refuses timers in a window
	// function before they reach the host.
	for _, module := range []string{"firings", "firings-c", "firings-as"} {
		for _, mode := range []string{operator.OnErrorFail, operator.OnErrorSkip} {
			t.Run(module+"/"+mode, func(t *testing.T) {
				w := statefulWindow(t, state.BackendMemory, plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10}, module, "rearm", 1, 0, &optest.Tape{})
				w.policy.Mode = mode
				optest.Run(t, w, []optest.Step{"a@1 x"})
				err := optest.Step("wm 9").Apply(context.Background(), w)
				if err == nil {
					t.Fatal("a timer call from a window_process function passed")
				}
				for _, want := range []string{"operator[win]", "timer_register", "window_process functions have no timers"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
			})
		}
	}
}

// Per-window state and its cleanup go into the operator's snapshot and come
// back, also into another parallelism: the firing count continues at 2
// after a restore, and the state is dropped with its window.
func TestWindowStateSnapshotRescales(t *testing.T) {
	ctx := context.Background()
	keys := make([]string, 12)
	var recs []string
	for i := range keys {
		keys[i] = fmt.Sprintf("k%02d", i)
		recs = append(recs, keys[i]+"@2 x")
	}
	plan := plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Lateness: 100}
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			before := statefulWindow(t, backend, plan, "firings", "count", 1, 0, &optest.Tape{})
			optest.Run(t, before, []optest.Step{optest.Step(strings.Join(recs, "; ")), "wm 9"})
			blob, err := before.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := blob.Write(ctx, &buf); err != nil {
				t.Fatal(err)
			}
			blob.Release()
			for _, p := range []int{1, 3} {
				got := 0
				for i := 0; i < p; i++ {
					out := &optest.Tape{}
					w := statefulWindow(t, backend, plan, "firings", "count", p, i, out)
					if err := w.Restore(ctx, []io.Reader{bytes.NewReader(buf.Bytes())}, 128, state.RangeOf(128, p, i)); err != nil {
						t.Fatal(err)
					}
					var mine []string
					for _, k := range keys {
						if state.RangeOf(128, p, i).Contains(state.KeyGroup([]byte(k), 128)) {
							mine = append(mine, k+"@5 x")
						}
					}
					if len(mine) == 0 {
						continue
					}
					optest.Run(t, w, []optest.Step{optest.Step(strings.Join(mine, "; "))})
					for _, line := range out.Lines {
						key, _, _ := strings.Cut(line, "@")
						if want := fmt.Sprintf("%s@9 %s [0,10) firing 2: 2 records", key, key); line != want {
							t.Errorf("parallelism %d subtask %d: %q, want %q", p, i, line, want)
						}
					}
					got += len(out.Lines)
					if entries, timers := stateCounts(t, w); entries != int64(len(mine)) || timers != int64(len(mine)) {
						t.Errorf("parallelism %d subtask %d restored %d entries and %d cleanup timers, want %d", p, i, entries, timers, len(mine))
					}
					optest.Run(t, w, []optest.Step{"wm 109"})
					if entries, timers := stateCounts(t, w); entries != 0 || timers != 0 {
						t.Errorf("parallelism %d subtask %d: %d entries and %d cleanup timers after the window was dropped", p, i, entries, timers)
					}
				}
				if got != len(keys) {
					t.Errorf("parallelism %d: %d re-firings, want %d", p, got, len(keys))
				}
			}
		})
	}
}

// Per-window state is refused at submission where windows cannot keep it,
// with a message naming the field; state_ttl must name declared states.
func TestWindowStatePlan(t *testing.T) {
	mod := optest.Module(t, "firings")
	tests := []struct {
		name string
		op   string
		want string
	}{
		{
			name: "tumbling",
			op:   `window: {type: tumbling, size: 1s}, allowed_lateness: 1s, state_ttl: [{state: fired, ttl: 1h}]`,
		},
		{
			name: "session windows merge",
			op:   `window: {type: session, gap: 1s}`,
			want: `operators[0].window.type: per-window state is not allowed when using merging (session) windows, and process_window function "count" of module ` + mod.ID + ` declares states fired (value)`,
		},
		{
			name: "count windows never end in time",
			op:   `window: {type: count, count: 10}`,
			want: `operators[0].window.type: per-window state is not allowed with count windows`,
		},
		{
			name: "global windows never end in time",
			op:   `window: {type: global, trigger: {type: count, count: 10}}`,
			want: `operators[0].window.type: per-window state is not allowed with global windows`,
		},
		{
			name: "tumbling with a purging count trigger",
			op:   `window: {type: tumbling, size: 1s, trigger: {type: count, count: 10, purge: true}}`,
		},
		{
			name: "window_all session",
			op:   `window_all: {type: session, gap: 1s}`,
			want: `operators[0].window_all.type: per-window state is not allowed when using merging (session) windows`,
		},
		{
			name: "state_ttl of an undeclared state",
			op:   `window: {type: tumbling, size: 1s}, state_ttl: [{state: seen, ttl: 1h}]`,
			want: `operators[0].state_ttl[0].state: module ` + mod.ID + ` declares no state "seen" (it declares fired (value))`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keyBy := `key_by: {field: user}, `
			if strings.HasPrefix(tt.op, "window_all") {
				keyBy = ""
			}
			j, err := spec.Parse([]byte(fmt.Sprintf(`
name: firings
sources: [{id: gen, generator: {kind: clicks, count: 10}}]
operators: [{id: win, input: gen, %s%s, process_window: {module: %q, function: count}}]
sinks: [{id: out, input: win, discard: true}]
`, keyBy, tt.op, mod.ID)))
			if err != nil {
				t.Fatal(err)
			}
			p, err := plan.Build(j, func(id string) (abi.Description, bool) { return mod.Description, id == mod.ID })
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !p.Vertex("win").Window.States {
					t.Fatal("the plan keeps no per-window state")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
		})
	}
}

// window_all keeps per-window state too, under the empty key.
func TestWindowStateWindowAll(t *testing.T) {
	out := &optest.Tape{}
	w := statefulWindow(t, state.BackendMemory, plan.Window{Type: plan.WindowTumbling, Size: 10, Slide: 10, Lateness: 5, All: true}, "firings", "count", 1, 0, out)
	optest.Run(t, w, []optest.Step{"a@1 x; b@2 x", "wm 9", "c@3 x", "wm 14"})
	optest.CheckLines(t, "output", out.Lines, []string{"@9  [0,10) firing 1: 2 records", "wm 9", "@9  [0,10) firing 2: 3 records", "wm 14"})
	if entries, timers := stateCounts(t, w); entries != 0 || timers != 0 {
		t.Fatalf("after the window was dropped: %d entries, %d timers", entries, timers)
	}
}
