package spec

import "slices"

// windowFields are the fields each window type uses.
var windowFields = map[string][]string{
	"tumbling": {"size", "offset"},
	"sliding":  {"size", "slide", "offset"},
	"session":  {"gap", "gap_function"},
	"count":    {"count", "count_slide"},
	"global":   nil,
}

// window checks a window; a join's window must be a time window.
func (v *validator) window(p string, w *Window, join bool) {
	v.oneOf(p+".type", w.Type, windowTypes...)
	switch {
	case w.Trigger != nil && join:
		v.fail(p+".trigger", "not supported in a join's window, which fires when the watermark passes its end")
	case w.Trigger != nil:
		v.trigger(p, w)
	case w.Type == "global" && !join:
		v.fail(p+".trigger", "required by a global window, which never fires on its own (as Flink's GlobalWindows): set a count, continuous_event_time or continuous_processing_time trigger")
	}
	switch {
	case w.Evictor != nil && join:
		v.fail(p+".evictor", "not supported in a join's window")
	case w.Evictor != nil:
		v.evictor(p, w)
	}
	uses, known := windowFields[w.Type]
	if !known {
		return
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"size", w.Size.Duration != 0},
		{"slide", w.Slide.Duration != 0},
		{"offset", w.Offset.Duration != 0},
		{"gap", w.Gap.Duration != 0},
		{"gap_function", w.GapFunction != nil},
		{"count", w.Count != 0},
		{"count_slide", w.CountSlide != 0},
	} {
		if f.set && !slices.Contains(uses, f.name) {
			v.fail(p+"."+f.name, "not used by a %s window", w.Type)
		}
	}
	switch w.Type {
	case "tumbling":
		v.positive(p+".size", w.Size)
		v.offset(p+".offset", w.Offset, w.Size, "size")
	case "sliding":
		v.positive(p+".size", w.Size)
		v.positive(p+".slide", w.Slide)
		v.offset(p+".offset", w.Offset, w.Slide, "slide")
	case "session":
		switch {
		case w.GapFunction != nil && w.Gap.Duration != 0:
			v.fail(p, "set gap or gap_function, not both")
		case w.GapFunction != nil:
			v.functionRef(p+".gap_function", w.GapFunction)
		default:
			v.positive(p+".gap", w.Gap)
		}
	case "global":
		if join {
			v.fail(p+".type", "a join needs a time window: tumbling, sliding or session")
		}
	case "count":
		if join {
			v.fail(p+".type", "a join needs a time window: tumbling, sliding or session")
		}
		if w.Count < 1 {
			v.fail(p+".count", "must be positive, got %d", w.Count)
		}
		if w.CountSlide < 0 {
			v.fail(p+".count_slide", "must not be negative, got %d", w.CountSlide)
		}
	}
}

// offset checks that a window offset lies in [0, period).
func (v *validator) offset(path string, offset, period Duration, name string) {
	switch {
	case offset.Duration < 0:
		v.fail(path, "must not be negative, got %s", offset)
	case period.Duration > 0 && offset.Duration >= period.Duration:
		v.fail(path, "must be less than %s (%s), got %s", name, period, offset)
	}
}
