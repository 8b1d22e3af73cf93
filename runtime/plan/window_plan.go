package plan

import (
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/spec"
)

// Window types of the job spec.
const (
	WindowTumbling = "tumbling"
	WindowSliding  = "sliding"
	WindowSession  = "session"
	WindowCount    = "count"
	WindowGlobal   = "global"
)

// Checkpoint modes of the job spec.
const (
	ModeExactlyOnce = "exactly_once"
	ModeAtLeastOnce = "at_least_once"
)

// Time characteristics of the job spec.
const (
	TimeEvent      = "event"
	TimeProcessing = "processing"
	TimeIngestion  = "ingestion"
)

// Window is a window operator resolved at submission: its assigner, its
// window function and its lateness. Durations are in milliseconds.
type Window struct {
	Type       string `json:"type"`
	Size       int64  `json:"size,omitempty"`
	Slide      int64  `json:"slide,omitempty"`
	Offset     int64  `json:"offset,omitempty"`
	Gap        int64  `json:"gap,omitempty"`
	Count      int64  `json:"count,omitempty"`
	CountSlide int64  `json:"count_slide,omitempty"`
	// GapFn gives a dynamic session gap.
	GapFn *Func `json:"gap_fn,omitempty"`
	// Builtin and Field name a built-in aggregate; otherwise FnKind says
	// what the vertex's function is (aggregate, reduce, window_process).
	Builtin string   `json:"builtin,omitempty"`
	Field   string   `json:"field,omitempty"`
	FnKind  abi.Kind `json:"fn_kind,omitempty"`
	// States: a window_process function whose module declares states,
	// which it keeps per key and window.
	States bool `json:"states,omitempty"`
	// All: window_all, one subtask over every record.
	All        bool  `json:"all,omitempty"`
	Lateness   int64 `json:"lateness,omitempty"`
	Processing bool  `json:"processing,omitempty"`
	// Trigger is the window's trigger; nil for the default of its clock,
	// which fires a window when the watermark (or, with Processing, the
	// clock) passes its end.
	Trigger *Trigger `json:"trigger,omitempty"`
	// Evictor removes records from a window when it fires; nil for none.
	Evictor *Evictor `json:"evictor,omitempty"`
}

// Evictor types of the job spec.
const (
	EvictorCount  = "count"
	EvictorTime   = "time"
	EvictorDelta  = "delta"
	EvictorCustom = "custom"
)

// Evictor is a window's evictor (Flink's Evictor): a count evictor keeps
// the last Max records, a time evictor those within Size milliseconds of
// the latest, a delta evictor those whose JSON number Field is less than
// Threshold from the last record's; After evicts after the window function
// instead of before it. A custom evictor is Fn, a function of kind
// evictor, which runs after the window function too when Both is set.
type Evictor struct {
	Type      string  `json:"type"`
	Max       int64   `json:"max,omitempty"`
	Size      int64   `json:"size,omitempty"`
	Threshold float64 `json:"threshold,omitempty"`
	Field     string  `json:"field,omitempty"`
	After     bool    `json:"after,omitempty"`
	Both      bool    `json:"both,omitempty"`
	Fn        *Func   `json:"fn,omitempty"`
}

// Trigger types of the job spec.
const (
	TriggerEventTime                = "event_time"
	TriggerProcessingTime           = "processing_time"
	TriggerCount                    = "count"
	TriggerContinuousEventTime      = "continuous_event_time"
	TriggerContinuousProcessingTime = "continuous_processing_time"
	TriggerCustom                   = "custom"
)

// Trigger is a window's trigger (Flink's Trigger): its type, the count of
// a count trigger, the interval of a continuous one in milliseconds, and
// whether every firing purges the window (FIRE_AND_PURGE); Fn is a custom
// trigger's function (kind trigger).
type Trigger struct {
	Type     string `json:"type"`
	Count    int64  `json:"count,omitempty"`
	Interval int64  `json:"interval,omitempty"`
	Purge    bool   `json:"purge,omitempty"`
	Fn       *Func  `json:"fn,omitempty"`
}

// newTrigger resolves a window's trigger: nil when it is the default one
// of the window's clock, which the operator runs on its own path (a global
// window has no default).
func newTrigger(t *spec.Trigger, processing, global bool) *Trigger {
	if t == nil {
		return nil
	}
	tp := &Trigger{Type: t.Type, Count: t.Count, Interval: t.Interval.Milliseconds(), Purge: t.Purge}
	dflt := TriggerEventTime
	if processing {
		dflt = TriggerProcessingTime
	}
	if tp.Type == dflt && !tp.Purge && !global {
		return nil
	}
	return tp
}

// newWindowPlan resolves window w of operator o (at path wpath), with the
// operator's allowed lateness.
func newWindowPlan(j *spec.Job, o *spec.Operator, w *spec.Window, wpath string, resolve resolver) *Window {
	wp := &Window{
		Type: w.Type, Size: w.Size.Milliseconds(), Slide: w.Slide.Milliseconds(), Offset: w.Offset.Milliseconds(),
		Gap: w.Gap.Milliseconds(), Count: w.Count, CountSlide: w.CountSlide,
		Lateness: o.AllowedLateness.Milliseconds(), Processing: j.Time == TimeProcessing,
	}
	wp.Trigger = newTrigger(w.Trigger, wp.Processing, wp.Type == WindowGlobal)
	if t := wp.Trigger; t != nil && t.Type == TriggerCustom {
		t.Fn = resolve(wpath+".trigger", w.Trigger.Module, w.Trigger.Function, abi.KindTrigger)
	}
	if e := w.Evictor; e != nil {
		wp.Evictor = &Evictor{Type: e.Type, Max: e.Max, Size: e.Size.Milliseconds(), Threshold: e.Threshold, Field: e.Field, After: !e.Before}
		if e.Type == EvictorCustom {
			wp.Evictor.After, wp.Evictor.Both = e.When == "after", e.When == "both"
			wp.Evictor.Fn = resolve(wpath+".evictor", e.Module, e.Function, abi.KindEvictor)
		}
	}
	if wp.Type == WindowTumbling {
		wp.Slide = wp.Size
	}
	if wp.Type == WindowCount && wp.CountSlide == 0 {
		wp.CountSlide = wp.Count
	}
	if g := w.GapFunction; g != nil {
		wp.GapFn = resolve(wpath+".gap_function", g.Module, g.Function, abi.KindSessionGap)
	}
	return wp
}

// resolver finds a module function of a kind, noting a problem when it
// cannot.
type resolver func(path, module, function string, kind abi.Kind) *Func

// planWindow resolves the window of an aggregate, reduce or process_window
// operator into v and returns the problems of its per-window state. A
// window_all operator runs in one subtask.
func planWindow(j *spec.Job, o *spec.Operator, v *Vertex, path string, resolve resolver, descs map[string]abi.Description) []string {
	w := o.Window
	wpath := path + ".window"
	if w == nil {
		w = o.WindowAll
		v.Parallelism = 1
		wpath = path + ".window_all"
	}
	wp := newWindowPlan(j, o, w, wpath, resolve)
	wp.All = o.WindowAll != nil
	switch {
	case o.Aggregate != nil && o.Aggregate.Builtin != "":
		wp.Builtin, wp.Field = o.Aggregate.Builtin, o.Aggregate.Field
	case o.Aggregate != nil:
		wp.FnKind = abi.KindAggregate
		v.Fn = resolve(path+".aggregate", o.Aggregate.Module, o.Aggregate.Function, abi.KindAggregate)
	case o.Reduce != nil:
		wp.FnKind = abi.KindReduce
		v.Fn = resolve(path+".reduce", o.Reduce.Module, o.Reduce.Function, abi.KindReduce)
	case o.ProcessWindow != nil:
		wp.FnKind = abi.KindWindowProcess
		v.Fn = resolve(path+".process_window", o.ProcessWindow.Module, o.ProcessWindow.Function, abi.KindWindowProcess)
	}
	v.Window = wp
	if o.ProcessWindow == nil || v.Fn == nil {
		return nil
	}
	desc := descs[v.Fn.Module]
	problems := stateTTLProblems(path, o, v.Fn, desc)
	wp.States = len(desc.States) > 0
	if p := windowStateProblem(wp, wpath, v.Fn, desc); p != "" {
		problems = append(problems, p)
	}
	return problems
}

// windowStateProblem refuses per-window state where windows cannot keep it:
// merging (session) windows, as Flink does, and count and global windows,
// which never end in time, so their state could never be cleared.
func windowStateProblem(wp *Window, wpath string, fn *Func, desc abi.Description) string {
	if !wp.States {
		return ""
	}
	var why string
	switch wp.Type {
	case WindowSession:
		why = "per-window state is not allowed when using merging (session) windows"
	case WindowCount:
		why = "per-window state is not allowed with count windows, which never end in time to clear it"
	case WindowGlobal:
		why = "per-window state is not allowed with global windows, which never end in time to clear it"
	default:
		return ""
	}
	return fmt.Sprintf("%s.type: %s, and process_window function %q of module %s declares states %s (use tumbling or sliding windows, or a module without states)",
		wpath, why, fn.Function, fn.Module, stateList(desc))
}
