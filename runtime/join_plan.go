package runtime

import (
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/spec"
)

// joinPlan is a join operator resolved at submission. Durations are in
// milliseconds; the interval bounds are inclusive (an exclusive bound is
// moved by one millisecond inward). A window join also sets the vertex's
// window plan, whose window operator it reuses.
type joinPlan struct {
	// interval is set for an interval join.
	interval     bool
	lower, upper int64
	lateness     int64
	// coGroup says that the vertex's function is a co_group function;
	// otherwise it is a join function, if any.
	coGroup bool
}

// planJoin resolves the join of operator o into v. Its inputs are connected
// left first: v.in[0] is the left input, v.in[1] the right one. An interval
// join needs event time: it returns a problem under processing time.
func planJoin(j *spec.Job, o *spec.Operator, v *vertex, path string, resolve resolver) []string {
	jo := o.Join
	jp := &joinPlan{lateness: o.AllowedLateness.Milliseconds()}
	if iv := jo.Interval; iv != nil {
		jp.interval = true
		jp.lower, jp.upper = iv.Lower.Milliseconds(), iv.Upper.Milliseconds()
		if iv.LowerExclusive {
			jp.lower++
		}
		if iv.UpperExclusive {
			jp.upper--
		}
	}
	if jo.Window != nil {
		v.win = newWindowPlan(j, o, jo.Window, fmt.Sprintf("%s.join.window", path), resolve)
	}
	switch {
	case jo.Function != nil:
		v.fn = resolve(path+".join.function", jo.Function.Module, jo.Function.Function, abi.KindJoin)
	case jo.CoGroup != nil:
		jp.coGroup = true
		v.fn = resolve(path+".join.co_group", jo.CoGroup.Module, jo.CoGroup.Function, abi.KindCoGroup)
	}
	v.join = jp
	if jp.interval && j.Time == timeProcessing {
		return []string{path + ".join.interval: an interval join needs event or ingestion time, not processing time"}
	}
	return nil
}
