package spec

import (
	"slices"
	"time"
)

// evictorFields are the fields each evictor type uses (before is every
// evictor's).
var evictorFields = map[string][]string{
	"count":  {"max"},
	"time":   {"size"},
	"delta":  {"threshold", "field"},
	"custom": {"module", "function", "when"},
}

// evictor checks the evictor of window w at path p: its fields, and that
// it fits the window.
func (v *validator) evictor(p string, w *Window) {
	e := w.Evictor
	p += ".evictor"
	v.oneOf(p+".type", e.Type, evictorTypes...)
	uses, known := evictorFields[e.Type]
	if !known {
		return
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"max", e.Max != 0},
		{"size", e.Size.Duration != 0},
		{"threshold", e.Threshold != 0},
		{"field", e.Field != ""},
		{"module", e.Module != ""},
		{"function", e.Function != ""},
		{"when", e.When != ""},
	} {
		if f.set && !slices.Contains(uses, f.name) {
			v.fail(p+"."+f.name, "not used by a %s evictor", e.Type)
		}
	}
	switch e.Type {
	case "count":
		if e.Max < 1 {
			v.fail(p+".max", "must be at least 1, got %d", e.Max)
		}
	case "time":
		if e.Size.Duration < time.Millisecond {
			v.fail(p+".size", "must be at least 1ms, got %s", e.Size)
		}
	case "delta":
		if e.Threshold <= 0 {
			v.fail(p+".threshold", "must be positive (a threshold of 0 or less evicts every record), got %g", e.Threshold)
		}
		if e.Field == "" {
			v.fail(p+".field", "required by a delta evictor: the JSON number field the delta is taken of")
		}
	case "custom":
		v.function(p, e.Module, e.Function)
		if e.When != "" {
			v.oneOf(p+".when", e.When, evictorWhens...)
		}
		if !e.Before {
			v.fail(p+".before", "not used by a custom evictor: set when (before, after or both)")
		}
	}
	if w.Type == "count" {
		v.fail(p, "not used by a count window, which keeps its last count records (a sliding count window is a global window with a count trigger and a count evictor)")
	}
}

// evictorFunction refuses an evictor with an aggregate or reduce, which
// keep an accumulator instead of the window's records that an evictor
// removes from (Flink buffers the records for an evictor whatever the
// function; here only process_window keeps them).
func (v *validator) evictorFunction(p string, w *Window, kind string) {
	if w.Evictor != nil && (kind == "aggregate" || kind == "reduce") {
		v.fail(p+".evictor", "needs the window's records, which only process_window keeps: %s folds them into an accumulator as they come", kind)
	}
}
