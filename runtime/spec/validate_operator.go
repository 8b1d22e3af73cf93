package spec

import (
	"slices"
	"strings"
)

// fieldAggregates are the builtin aggregates over a JSON number field.
var fieldAggregates = []string{"sum", "min", "max", "avg"}

func (v *validator) operator(p string, op *Operator) {
	v.parallelism(p+".parallelism", op.Parallelism)
	switch kinds := op.kinds(); {
	case len(kinds) == 0:
		v.fail(p, "set one of %s", strings.Join(operatorKinds, ", "))
	case len(kinds) > 1:
		v.fail(p, "set only one of %s", strings.Join(kinds, ", "))
	}
	if op.Join != nil {
		v.joinOperator(p, op)
	} else {
		v.input(p+".input", op.Input)
	}
	if op.KeyBy != nil && op.Join == nil {
		v.keyBy(p+".key_by", op.KeyBy)
	}
	switch {
	case op.Partition != "" && (op.KeyBy != nil || op.Join != nil):
		v.fail(p+".partition", "not with key_by or join, which partition by key")
	case op.Partition != "":
		v.partition(p+".partition", op.Partition, op.Input, op.Parallelism)
	}
	if op.Process != nil && op.KeyBy == nil {
		v.fail(p+".key_by", "required by process")
	}
	for _, f := range []struct {
		name string
		ref  *FunctionRef
	}{{"map", op.Map}, {"filter", op.Filter}, {"flat_map", op.FlatMap}, {"reduce", op.Reduce}, {"process_window", op.ProcessWindow}, {"process", op.Process}} {
		if f.ref != nil {
			v.functionRef(p+"."+f.name, f.ref)
		}
	}
	if op.Extract != nil && op.Extract.Field == "" {
		v.fail(p+".extract.field", "required: the member whose value becomes the record's")
	}
	if op.Aggregate != nil {
		v.aggregate(p+".aggregate", op.Aggregate)
	}
	if op.BroadcastProcess != nil {
		v.broadcastProcess(p, op) // broadcast_process.go
	}
	if op.AsyncLookup != nil {
		v.asyncLookup(p+".async_lookup", op.AsyncLookup) // lookup.go
	}
	v.keyedState(p, op)
	v.windowed(p, op)
	v.sideOutputs(p, op)
}

// windowed checks the window of aggregate, reduce and process_window, and
// that no other operator has one.
func (v *validator) windowed(p string, op *Operator) {
	kind := op.Kind()
	windowed := kind == "aggregate" || kind == "reduce" || kind == "process_window"
	if !windowed {
		misplaced := "only aggregate, reduce and process_window use a window"
		if kind == "join" {
			misplaced = "a join sets its window in join.window"
		}
		if op.Window != nil {
			v.fail(p+".window", "%s", misplaced)
		}
		if op.WindowAll != nil {
			v.fail(p+".window_all", "%s", misplaced)
		}
		if kind == "join" {
			v.notNegative(p+".allowed_lateness", op.AllowedLateness)
			if op.LateOutput != "" {
				v.lateOutput(p+".late_output", op.LateOutput)
			}
			return
		}
		if op.AllowedLateness.Duration != 0 {
			v.fail(p+".allowed_lateness", "only used with the window of aggregate, reduce, process_window or join")
		}
		if op.LateOutput != "" {
			v.fail(p+".late_output", "only used with the window of aggregate, reduce, process_window or join")
		}
		return
	}
	switch {
	case op.Window != nil && op.WindowAll != nil:
		v.fail(p, "set window or window_all, not both")
	case op.Window == nil && op.WindowAll == nil:
		v.fail(p, "%s needs window or window_all", kind)
	case op.Window != nil && op.KeyBy == nil:
		v.fail(p+".key_by", "required by window (window_all takes every record)")
	case op.WindowAll != nil && op.KeyBy != nil:
		v.fail(p+".key_by", "not allowed with window_all")
	}
	if op.Window != nil {
		v.window(p+".window", op.Window, false)
		v.evictorFunction(p+".window", op.Window, kind)
	}
	if op.WindowAll != nil {
		v.window(p+".window_all", op.WindowAll, false)
		v.evictorFunction(p+".window_all", op.WindowAll, kind)
	}
	v.notNegative(p+".allowed_lateness", op.AllowedLateness)
	if op.LateOutput != "" {
		v.lateOutput(p+".late_output", op.LateOutput)
	}
}

func (v *validator) joinOperator(p string, op *Operator) {
	if op.Input != "" {
		v.fail(p+".input", "a join takes its inputs from join.left and join.right")
	}
	if op.KeyBy != nil {
		v.fail(p+".key_by", "a join keys its inputs in join.left.key_by and join.right.key_by")
	}
	j := op.Join
	p += ".join"
	v.input(p+".left.input", j.Left.Input)
	v.keyBy(p+".left.key_by", &j.Left.KeyBy)
	v.input(p+".right.input", j.Right.Input)
	v.keyBy(p+".right.key_by", &j.Right.KeyBy)
	switch {
	case j.Window != nil && j.Interval != nil:
		v.fail(p, "set window or interval, not both")
	case j.Window == nil && j.Interval == nil:
		v.fail(p, "set window or interval")
	case j.Window != nil:
		v.window(p+".window", j.Window, true)
	case j.Interval.Lower.Duration > j.Interval.Upper.Duration:
		v.fail(p+".interval", "lower (%s) must not be after upper (%s)", j.Interval.Lower, j.Interval.Upper)
	}
	switch {
	case j.Function != nil && j.CoGroup != nil:
		v.fail(p, "set function or co_group, not both")
	case j.Function != nil:
		v.functionRef(p+".function", j.Function)
	case j.CoGroup != nil:
		v.functionRef(p+".co_group", j.CoGroup)
		if j.Interval != nil {
			v.fail(p+".co_group", "needs a window join, not an interval join")
		}
	}
}

func (v *validator) keyBy(p string, k *KeyBy) {
	fn := k.Module != "" || k.Function != ""
	switch {
	case k.Field != "" && fn:
		v.fail(p, "set field, or module and function, not both")
	case k.Field == "" && !fn:
		v.fail(p, "set field, or module and function")
	case fn:
		v.function(p, k.Module, k.Function)
	}
}

func (v *validator) aggregate(p string, a *Aggregate) {
	fn := a.Module != "" || a.Function != ""
	switch {
	case a.Builtin != "" && fn:
		v.fail(p, "set builtin, or module and function, not both")
	case a.Builtin == "" && !fn:
		v.fail(p, "set builtin, or module and function")
	case fn:
		v.function(p, a.Module, a.Function)
		if a.Field != "" {
			v.fail(p+".field", "only a builtin aggregate reads a field")
		}
	case a.Builtin == "count":
		if a.Field != "" {
			v.fail(p+".field", "count reads no field")
		}
	case a.Field == "" && slices.Contains(fieldAggregates, a.Builtin):
		v.fail(p+".field", "required by %s", a.Builtin)
	default:
		v.oneOf(p+".builtin", a.Builtin, builtinAggregates...)
	}
}

// partition checks an explicit partitioning: a known name, and forward only
// between equal parallelisms, as Flink requires.
func (v *validator) partition(path, partition, input string, parallelism int) {
	v.oneOf(path, partition, partitions...)
	if partition != "forward" {
		return
	}
	from := v.parallelismOf(input)
	if from > 0 && parallelism > 0 && from != parallelism {
		v.fail(path, "forward needs the parallelism of its input %q (%d), got %d", input, from, parallelism)
	}
}

// parallelismOf is the parallelism of a source or operator (or of the
// operator whose side output id reads), 0 if unknown.
func (v *validator) parallelismOf(id string) int {
	id, _ = v.job.Stream(id)
	for _, s := range v.job.Sources {
		if s.ID == id {
			return s.Parallelism
		}
	}
	for _, o := range v.job.Operators {
		if o.ID == id {
			return o.Parallelism
		}
	}
	return 0
}
