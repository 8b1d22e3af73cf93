package spec

import (
	"testing"
)

// windowOp is a spec with one windowed operator of the given fields, in a
// job with the given settings.
func windowOp(settings, fields string) string {
	return settings + withOps("  - {id: op, input: src, "+fields+"}\n")
}

// TestTriggersParse: every trigger type, with and without purge, on the
// windows it fits.
func TestTriggersParse(t *testing.T) {
	for _, tc := range []struct{ settings, fields string }{
		{"", "key_by: {field: k}, window: {type: tumbling, size: 1m, trigger: {type: event_time, purge: true}}, aggregate: {builtin: count}"},
		{"", "key_by: {field: k}, window: {type: sliding, size: 1m, slide: 10s, trigger: {type: processing_time}}, aggregate: {builtin: sum, field: n}"},
		{"", "key_by: {field: k}, window: {type: session, gap: 1m, trigger: {type: count, count: 1}}, reduce: {module: " + modA + ", function: r}"},
		{"", "window_all: {type: tumbling, size: 1h, trigger: {type: continuous_event_time, interval: 1m, purge: true}}, aggregate: {builtin: max, field: n}"},
		{"", "key_by: {field: k}, window: {type: tumbling, size: 1h, trigger: {type: continuous_processing_time, interval: 1ms}}, process_window: {module: " + modA + ", function: p}"},
		{"time: processing\n", "key_by: {field: k}, window: {type: tumbling, size: 1m, trigger: {type: processing_time, purge: true}}, aggregate: {builtin: count}"},
		{"time: ingestion\n", "key_by: {field: k}, window: {type: tumbling, size: 1m, trigger: {type: continuous_event_time, interval: 1s}}, aggregate: {builtin: count}"},
		{"", "key_by: {field: k}, window: {type: global, trigger: {type: count, count: 100, purge: true}}, aggregate: {builtin: avg, field: n}"},
		{"", "window_all: {type: global, trigger: {type: continuous_event_time, interval: 1m}}, aggregate: {builtin: count}"},
		{"time: processing\n", "key_by: {field: k}, window: {type: global, trigger: {type: continuous_processing_time, interval: 10s}}, process_window: {module: " + modA + ", function: p}"},
		{"", "key_by: {field: k}, window: {type: tumbling, size: 1m, trigger: {type: custom, module: " + modA + ", function: t}}, aggregate: {builtin: count}"},
		{"", "key_by: {field: k}, window: {type: session, gap: 1m, trigger: {type: custom, module: " + modA + ", function: t, purge: true}}, process_window: {module: " + modA + ", function: p}"},
		{"time: processing\n", "window_all: {type: global, trigger: {type: custom, module: " + modA + ", function: t}}, aggregate: {builtin: count}"},
	} {
		j := mustParse(t, windowOp(tc.settings, tc.fields))
		w := j.Operators[0].Window
		if w == nil {
			w = j.Operators[0].WindowAll
		}
		if w.Trigger == nil || w.Trigger.Type == "" {
			t.Errorf("%s: no trigger in %s", tc.fields, show(j))
		}
	}
}

// TestTriggerProblems: what is wrong with a trigger, at the field.
func TestTriggerProblems(t *testing.T) {
	for _, tc := range []struct{ settings, fields, path, want string }{
		{"", "key_by: {field: k}, window: {type: tumbling, size: 1s, trigger: {type: count, count: 0}}, aggregate: {builtin: count}",
			"operators[0].window.trigger.count", "must be at least 1, got 0"},
		{"", "key_by: {field: k}, window: {type: tumbling, size: 1s, trigger: {type: continuous_event_time}}, aggregate: {builtin: count}",
			"operators[0].window.trigger.interval", "must be at least 1ms, got 0s"},
		{"", "key_by: {field: k}, window: {type: tumbling, size: 1s, trigger: {type: processing_time, interval: 1s}}, aggregate: {builtin: count}",
			"operators[0].window.trigger.interval", "not used by a processing_time trigger"},
		{"", "key_by: {field: k}, window: {type: tumbling, size: 1s, trigger: {type: continuous, interval: 1s}}, aggregate: {builtin: count}",
			"operators[0].window.trigger.type", `must be one of event_time, processing_time, count, continuous_event_time, continuous_processing_time, custom; got "continuous"`},
		{"", "key_by: {field: k}, window: {type: tumbling, size: 1s, trigger: {type: custom, function: t}}, aggregate: {builtin: count}",
			"operators[0].window.trigger.module", "required"},
		{"", "key_by: {field: k}, window: {type: tumbling, size: 1s, trigger: {type: custom, module: " + modA + "}}, aggregate: {builtin: count}",
			"operators[0].window.trigger.function", "required"},
		{"", "key_by: {field: k}, window: {type: tumbling, size: 1s, trigger: {type: count, count: 2, function: t}}, aggregate: {builtin: count}",
			"operators[0].window.trigger.function", "not used by a count trigger"},
		{"", "key_by: {field: k}, window: {type: tumbling, size: 1s, trigger: {type: custom, module: " + modA + ", function: t, count: 2}}, aggregate: {builtin: count}",
			"operators[0].window.trigger.count", "not used by a custom trigger"},
		{"", "key_by: {field: k}, window: {type: count, count: 2, trigger: {type: count, count: 2}}, aggregate: {builtin: count}",
			"operators[0].window.trigger", "not used by a count window, which fires every count records (a count window is a global window with a count trigger)"},
		{"time: processing\n", "window_all: {type: tumbling, size: 1s, trigger: {type: continuous_event_time, interval: 100ms}}, aggregate: {builtin: count}",
			"operators[0].window_all.trigger.type", "continuous_event_time fires on watermarks, and with time: processing there are none before the end of input (use processing_time or continuous_processing_time)"},
		{"", "key_by: {field: k}, window: {type: global}, aggregate: {builtin: count}",
			"operators[0].window.trigger", "required by a global window, which never fires on its own (as Flink's GlobalWindows): set a count, continuous_event_time or continuous_processing_time trigger"},
		{"", "window_all: {type: global, trigger: {type: event_time}}, aggregate: {builtin: count}",
			"operators[0].window_all.trigger.type", "event_time fires at a window's end, which a global window does not have (Flink types it for time windows only): use count, continuous_event_time or continuous_processing_time"},
		{"", "window_all: {type: global, size: 1s, trigger: {type: count, count: 1}}, aggregate: {builtin: count}",
			"operators[0].window_all.size", "not used by a global window"},
	} {
		if got := problemAt(t, windowOp(tc.settings, tc.fields), tc.path); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.path, got, tc.want)
		}
	}
	join := withOps("  - {id: op, join: {left: {input: src, key_by: {field: k}}, right: {input: src, key_by: {field: k}}, window: {type: tumbling, size: 1s, trigger: {type: count, count: 1}}}}\n")
	if got, want := problemAt(t, join, "operators[0].join.window.trigger"), "not supported in a join's window, which fires when the watermark passes its end"; got != want {
		t.Errorf("join: got %q, want %q", got, want)
	}
}

// TestGlobalWindowInJoin: a join's window is a time window.
func TestGlobalWindowInJoin(t *testing.T) {
	join := withOps("  - {id: op, join: {left: {input: src, key_by: {field: k}}, right: {input: src, key_by: {field: k}}, window: {type: global}}}\n")
	if got, want := problemAt(t, join, "operators[0].join.window.type"), "a join needs a time window: tumbling, sliding or session"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := problemAt(t, join, "operators[0].join.window.trigger"); got != "no problem at operators[0].join.window.trigger: operators[0].join.window.type: "+
		"a join needs a time window: tumbling, sliding or session (line 4)" {
		t.Errorf("a trigger asked for: %q", got)
	}
}

// TestEvictorsParse: every evictor type, before (the default) and after.
func TestEvictorsParse(t *testing.T) {
	pw := "process_window: {module: " + modA + ", function: p}"
	for _, tc := range []struct {
		fields string
		want   Evictor
	}{
		{"key_by: {field: k}, window: {type: global, trigger: {type: count, count: 2}, evictor: {type: count, max: 4}}, " + pw,
			Evictor{Type: "count", Max: 4, Before: true}},
		{"key_by: {field: k}, window: {type: tumbling, size: 1m, evictor: {type: time, size: 10s, before: false}}, " + pw,
			Evictor{Type: "time", Size: dur("10s")}},
		{"window_all: {type: session, gap: 1m, trigger: {type: count, count: 3}, evictor: {type: delta, threshold: 2.5, field: price}}, " + pw,
			Evictor{Type: "delta", Threshold: 2.5, Field: "price", Before: true}},
		{"window_all: {type: sliding, size: 1m, slide: 10s, evictor: {type: delta, threshold: 3, field: n, before: true}}, " + pw,
			Evictor{Type: "delta", Threshold: 3, Field: "n", Before: true}},
		{"key_by: {field: k}, window: {type: tumbling, size: 1m, evictor: {type: custom, module: " + modA + ", function: e}}, " + pw,
			Evictor{Type: "custom", Module: modA, Function: "e", Before: true}},
		{"key_by: {field: k}, window: {type: session, gap: 1m, evictor: {type: custom, module: m@2, function: e, when: both}}, " + pw,
			Evictor{Type: "custom", Module: "m@2", Function: "e", When: "both", Before: true}},
	} {
		j := mustParse(t, windowOp("", tc.fields))
		w := j.Operators[0].Window
		if w == nil {
			w = j.Operators[0].WindowAll
		}
		if w.Evictor == nil || *w.Evictor != tc.want {
			t.Errorf("%s: evictor %+v, want %+v", tc.fields, w.Evictor, tc.want)
		}
	}
}

// TestEvictorProblems: what is wrong with an evictor, at the field.
func TestEvictorProblems(t *testing.T) {
	pw := "process_window: {module: " + modA + ", function: p}"
	for _, tc := range []struct{ fields, path, want string }{
		{"key_by: {field: k}, window: {type: tumbling, size: 1s, evictor: {type: count}}, " + pw,
			"operators[0].window.evictor.max", "must be at least 1, got 0"},
		{"key_by: {field: k}, window: {type: tumbling, size: 1s, evictor: {type: time, size: 100us}}, " + pw,
			"operators[0].window.evictor.size", "must be at least 1ms, got 100µs"},
		{"key_by: {field: k}, window: {type: tumbling, size: 1s, evictor: {type: delta, threshold: 0, field: n}}, " + pw,
			"operators[0].window.evictor.threshold", "must be positive (a threshold of 0 or less evicts every record), got 0"},
		{"key_by: {field: k}, window: {type: tumbling, size: 1s, evictor: {type: delta, threshold: 1}}, " + pw,
			"operators[0].window.evictor.field", "required by a delta evictor: the JSON number field the delta is taken of"},
		{"key_by: {field: k}, window: {type: tumbling, size: 1s, evictor: {type: count, max: 2, field: n}}, " + pw,
			"operators[0].window.evictor.field", "not used by a count evictor"},
		{"key_by: {field: k}, window: {type: tumbling, size: 1s, evictor: {type: count, max: 2}}, aggregate: {builtin: sum, field: n}",
			"operators[0].window.evictor", "needs the window's records, which only process_window keeps: aggregate folds them into an accumulator as they come"},
		{"window_all: {type: global, trigger: {type: count, count: 2}, evictor: {type: time, size: 1s}}, reduce: {module: " + modA + ", function: r}",
			"operators[0].window_all.evictor", "needs the window's records, which only process_window keeps: reduce folds them into an accumulator as they come"},
		{"key_by: {field: k}, window: {type: count, count: 2, evictor: {type: count, max: 1}}, " + pw,
			"operators[0].window.evictor", "not used by a count window, which keeps its last count records (a sliding count window is a global window with a count trigger and a count evictor)"},
		{"key_by: {field: k}, window: {type: tumbling, size: 1s, evictor: {type: delta, threshold: .inf, field: n}}, " + pw,
			"operators[0].window.evictor.threshold", "want a finite number, got .inf"},
		{"key_by: {field: k}, window: {type: tumbling, size: 1s, evictor: {type: delta, threshold: two, field: n}}, " + pw,
			"operators[0].window.evictor.threshold", "want a number, got a string"},
		{"key_by: {field: k}, window: {type: tumbling, size: 1s, evictor: {type: custom, module: " + modA + ", function: e, when: during}}, " + pw,
			"operators[0].window.evictor.when", `must be one of before, after, both; got "during"`},
		{"key_by: {field: k}, window: {type: tumbling, size: 1s, evictor: {type: custom, module: " + modA + "}}, " + pw,
			"operators[0].window.evictor.function", "required"},
		{"key_by: {field: k}, window: {type: tumbling, size: 1s, evictor: {type: custom, function: e}}, " + pw,
			"operators[0].window.evictor.module", "required"},
		{"key_by: {field: k}, window: {type: tumbling, size: 1s, evictor: {type: custom, module: " + modA + ", function: e, max: 3}}, " + pw,
			"operators[0].window.evictor.max", "not used by a custom evictor"},
		{"key_by: {field: k}, window: {type: tumbling, size: 1s, evictor: {type: count, max: 3, when: after}}, " + pw,
			"operators[0].window.evictor.when", "not used by a count evictor"},
		{"key_by: {field: k}, window: {type: tumbling, size: 1s, evictor: {type: custom, module: " + modA + ", function: e, before: false}}, " + pw,
			"operators[0].window.evictor.before", "not used by a custom evictor: set when (before, after or both)"},
		{"key_by: {field: k}, window: {type: tumbling, size: 1s, evictor: {type: custom, module: " + modA + ", function: e}}, aggregate: {module: " + modA + ", function: a}",
			"operators[0].window.evictor", "needs the window's records, which only process_window keeps: aggregate folds them into an accumulator as they come"},
		{"map: {module: " + modA + ", function: m}, window: {type: tumbling, size: 1s, evictor: {type: custom, module: " + modA + ", function: e}}",
			"operators[0].window", "only aggregate, reduce and process_window use a window"},
	} {
		if got := problemAt(t, windowOp("", tc.fields), tc.path); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.path, got, tc.want)
		}
	}
}

// TestCustomTriggerOffWindow: a custom trigger needs a window operator.
func TestCustomTriggerOffWindow(t *testing.T) {
	spec := windowOp("", "key_by: {field: k}, window: {type: tumbling, size: 1s, trigger: {type: custom, module: "+modA+", function: t}}, process: {module: "+modA+", function: p}")
	if got, want := problemAt(t, spec, "operators[0].window"), "only aggregate, reduce and process_window use a window"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
