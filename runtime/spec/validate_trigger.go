package spec

import (
	"slices"
	"time"
)

// triggerFields are the fields each trigger type uses.
var triggerFields = map[string][]string{
	"event_time":                 nil,
	"processing_time":            nil,
	"count":                      {"count"},
	"continuous_event_time":      {"interval"},
	"continuous_processing_time": {"interval"},
	"custom":                     {"module", "function"},
}

// eventTimeTrigger reports whether a trigger type fires on watermarks.
func eventTimeTrigger(typ string) bool {
	return typ == "event_time" || typ == "continuous_event_time"
}

// trigger checks the trigger of window w at path p: its fields, and that
// it fits the window and the job's time.
func (v *validator) trigger(p string, w *Window) {
	t := w.Trigger
	p += ".trigger"
	v.oneOf(p+".type", t.Type, triggerTypes...)
	uses, known := triggerFields[t.Type]
	if !known {
		return
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"count", t.Count != 0},
		{"interval", t.Interval.Duration != 0},
		{"module", t.Module != ""},
		{"function", t.Function != ""},
	} {
		if f.set && !slices.Contains(uses, f.name) {
			v.fail(p+"."+f.name, "not used by a %s trigger", t.Type)
		}
	}
	switch t.Type {
	case "count":
		if t.Count < 1 {
			v.fail(p+".count", "must be at least 1, got %d", t.Count)
		}
	case "continuous_event_time", "continuous_processing_time":
		if t.Interval.Duration < time.Millisecond {
			v.fail(p+".interval", "must be at least 1ms, got %s", t.Interval)
		}
	case "custom":
		v.function(p, t.Module, t.Function)
	}
	switch {
	case w.Type == "global" && (t.Type == "event_time" || t.Type == "processing_time"):
		v.fail(p+".type", "%s fires at a window's end, which a global window does not have (Flink types it for time windows only): use count, continuous_event_time or continuous_processing_time", t.Type)
	case w.Type == "count":
		v.fail(p, "not used by a count window, which fires every count records (a count window is a global window with a count trigger)")
	case eventTimeTrigger(t.Type) && v.job.Time == "processing":
		v.fail(p+".type", "%s fires on watermarks, and with time: processing there are none before the end of input (use processing_time or continuous_processing_time)", t.Type)
	}
}
