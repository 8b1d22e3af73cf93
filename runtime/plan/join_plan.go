package plan

import (
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/spec"
)

// Join is a join operator resolved at submission. Durations are in
// milliseconds; the interval bounds are inclusive (an exclusive bound is
// moved by one millisecond inward). A window join also sets the vertex's
// window plan, whose window operator it reuses.
type Join struct {
	// Interval is set for an interval join.
	Interval bool  `json:"interval,omitempty"`
	Lower    int64 `json:"lower,omitempty"`
	Upper    int64 `json:"upper,omitempty"`
	Lateness int64 `json:"lateness,omitempty"`
	// CoGroup says that the vertex's function is a co_group function;
	// otherwise it is a join function, if any.
	CoGroup bool `json:"co_group,omitempty"`
}

// planJoin resolves the join of operator o into v. Its inputs are connected
// left first: v.in[0] is the left input, v.in[1] the right one. An interval
// join needs event time: it returns a problem under processing time.
func planJoin(j *spec.Job, o *spec.Operator, v *Vertex, path string, resolve resolver) []string {
	jo := o.Join
	jp := &Join{Lateness: o.AllowedLateness.Milliseconds()}
	if iv := jo.Interval; iv != nil {
		jp.Interval = true
		jp.Lower, jp.Upper = iv.Lower.Milliseconds(), iv.Upper.Milliseconds()
		if iv.LowerExclusive {
			jp.Lower++
		}
		if iv.UpperExclusive {
			jp.Upper--
		}
	}
	if jo.Window != nil {
		v.Window = newWindowPlan(j, o, jo.Window, fmt.Sprintf("%s.join.window", path), resolve)
	}
	switch {
	case jo.Function != nil:
		v.Fn = resolve(path+".join.function", jo.Function.Module, jo.Function.Function, abi.KindJoin)
	case jo.CoGroup != nil:
		jp.CoGroup = true
		v.Fn = resolve(path+".join.co_group", jo.CoGroup.Module, jo.CoGroup.Function, abi.KindCoGroup)
	}
	v.Join = jp
	if jp.Interval && j.Time == TimeProcessing {
		return []string{path + ".join.interval: an interval join needs event or ingestion time, not processing time"}
	}
	return nil
}
