package runtime

import (
	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/spec"
)

// Window types of the job spec.
const (
	windowTumbling = "tumbling"
	windowSliding  = "sliding"
	windowSession  = "session"
	windowCount    = "count"
)

// Time characteristics of the job spec.
const (
	timeEvent      = "event"
	timeProcessing = "processing"
	timeIngestion  = "ingestion"
)

// windowPlan is a window operator resolved at submission: its assigner, its
// window function and its lateness. Durations are in milliseconds.
type windowPlan struct {
	typ                 string
	size, slide, offset int64
	gap                 int64
	count, countSlide   int64
	// gapFn gives a dynamic session gap.
	gapFn *funcRef
	// builtin and field name a built-in aggregate; otherwise fnKind says
	// what the vertex's function is (aggregate, reduce, window_process).
	builtin string
	field   string
	fnKind  abi.Kind
	// states: a window_process function whose module declares states,
	// which it keeps per key and window.
	states bool
	// all: window_all, one subtask over every record.
	all        bool
	lateness   int64
	processing bool
}

// newWindowPlan resolves window w of operator o (at path wpath), with the
// operator's allowed lateness.
func newWindowPlan(j *spec.Job, o *spec.Operator, w *spec.Window, wpath string, resolve resolver) *windowPlan {
	wp := &windowPlan{
		typ: w.Type, size: w.Size.Milliseconds(), slide: w.Slide.Milliseconds(), offset: w.Offset.Milliseconds(),
		gap: w.Gap.Milliseconds(), count: w.Count, countSlide: w.CountSlide,
		lateness: o.AllowedLateness.Milliseconds(), processing: j.Time == timeProcessing,
	}
	if wp.typ == windowTumbling {
		wp.slide = wp.size
	}
	if wp.typ == windowCount && wp.countSlide == 0 {
		wp.countSlide = wp.count
	}
	if g := w.GapFunction; g != nil {
		wp.gapFn = resolve(wpath+".gap_function", g.Module, g.Function, abi.KindSessionGap)
	}
	return wp
}

// resolver finds a module function of a kind, noting a problem when it
// cannot.
type resolver func(path, module, function string, kind abi.Kind) *funcRef

// planWindow resolves the window of an aggregate, reduce or process_window
// operator into v and returns the problems of its per-window state. A
// window_all operator runs in one subtask.
func planWindow(j *spec.Job, o *spec.Operator, v *vertex, path string, resolve resolver) []string {
	w := o.Window
	wpath := path + ".window"
	if w == nil {
		w = o.WindowAll
		v.parallelism = 1
		wpath = path + ".window_all"
	}
	wp := newWindowPlan(j, o, w, wpath, resolve)
	wp.all = o.WindowAll != nil
	switch {
	case o.Aggregate != nil && o.Aggregate.Builtin != "":
		wp.builtin, wp.field = o.Aggregate.Builtin, o.Aggregate.Field
	case o.Aggregate != nil:
		wp.fnKind = abi.KindAggregate
		v.fn = resolve(path+".aggregate", o.Aggregate.Module, o.Aggregate.Function, abi.KindAggregate)
	case o.Reduce != nil:
		wp.fnKind = abi.KindReduce
		v.fn = resolve(path+".reduce", o.Reduce.Module, o.Reduce.Function, abi.KindReduce)
	case o.ProcessWindow != nil:
		wp.fnKind = abi.KindWindowProcess
		v.fn = resolve(path+".process_window", o.ProcessWindow.Module, o.ProcessWindow.Function, abi.KindWindowProcess)
	}
	v.win = wp
	if o.ProcessWindow == nil || v.fn == nil {
		return nil
	}
	problems := stateTTLProblems(path, o, v.fn)
	wp.states = len(v.fn.module.desc.States) > 0
	if p := windowStateProblem(wp, wpath, v.fn); p != "" {
		problems = append(problems, p)
	}
	return problems
}
