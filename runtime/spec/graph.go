package spec

import (
	"slices"
	"strings"
)

// Vertex kinds, as Node reports them.
const (
	KindSource   = "source"
	KindOperator = "operator"
	KindSink     = "sink"
)

// operatorKinds are the names of an operator's functions, in field order.
var operatorKinds = []string{"map", "filter", "flat_map", "extract", "aggregate", "reduce", "process_window", "process", "join", "broadcast_process", "async_lookup"}

// kinds lists the functions the operator sets.
func (o *Operator) kinds() []string {
	set := []bool{o.Map != nil, o.Filter != nil, o.FlatMap != nil, o.Extract != nil, o.Aggregate != nil, o.Reduce != nil, o.ProcessWindow != nil, o.Process != nil, o.Join != nil, o.BroadcastProcess != nil, o.AsyncLookup != nil}
	var kinds []string
	for i, s := range set {
		if s {
			kinds = append(kinds, operatorKinds[i])
		}
	}
	return kinds
}

// Kind names the operator's function: map, filter, flat_map, extract, aggregate,
// reduce, process_window, process, join, broadcast_process or async_lookup.
// Parse guarantees exactly one.
func (o *Operator) Kind() string {
	if k := o.kinds(); len(k) > 0 {
		return k[0]
	}
	return ""
}

// Node reports whether id names a vertex of the job, and its kind:
// KindSource, KindOperator or KindSink.
func (j *Job) Node(id string) (kind string, ok bool) {
	switch {
	case slices.ContainsFunc(j.Sources, func(s Source) bool { return s.ID == id }):
		return KindSource, true
	case slices.ContainsFunc(j.Operators, func(o Operator) bool { return o.ID == id }):
		return KindOperator, true
	case slices.ContainsFunc(j.Sinks, func(s Sink) bool { return s.ID == id }):
		return KindSink, true
	}
	return "", false
}

// Inputs returns the ids of the vertices whose records reach vertex id, in
// order: none for a source; an operator's input, a join's left then
// right input, or a broadcast_process operator's input then broadcast
// input; a sink's input or, for a sink without input, the operators whose
// late_output names it (their late records). An input that reads a side
// output ("id.name") is the id of its operator.
func (j *Job) Inputs(id string) []string {
	for i := range j.Operators {
		if j.Operators[i].ID == id {
			ins := j.Operators[i].inputs()
			for k := range ins {
				ins[k], _ = j.Stream(ins[k])
			}
			return ins
		}
	}
	for _, s := range j.Sinks {
		if s.ID != id {
			continue
		}
		if s.Input != "" {
			from, _ := j.Stream(s.Input)
			return []string{from}
		}
		var late []string
		for _, o := range j.Operators {
			if o.LateOutput == id {
				late = append(late, o.ID)
			}
		}
		return late
	}
	return nil
}

// inputs are the ids an operator reads: its input, a join's two, or a
// broadcast_process operator's keyed input and then its broadcast input.
func (o *Operator) inputs() []string {
	if o.Join != nil {
		return []string{o.Join.Left.Input, o.Join.Right.Input}
	}
	if o.BroadcastProcess != nil {
		return []string{o.Input, o.BroadcastProcess.Broadcast}
	}
	return []string{o.Input}
}

// cycles reports every cycle among the operators, as the ids along it in the
// direction records flow, at the operator where the search closed it.
func (v *validator) cycles() {
	const (
		unvisited = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(id string)
	visit = func(id string) {
		state[id] = onPath
		path = append(path, id)
		for _, in := range v.job.Operators[v.vertices[id].index].inputs() {
			if in, _ = v.job.Stream(in); !v.isOperator(in) {
				continue
			}
			switch state[in] {
			case unvisited:
				visit(in)
			case onPath:
				// path runs from in against the flow; reversed, it flows into in.
				cycle := slices.Clone(path[slices.Index(path, in):])
				slices.Reverse(cycle)
				cycle = append([]string{in}, cycle...)
				v.fail(v.vertices[in].path(), "cycle: %s", strings.Join(cycle, " -> "))
			}
		}
		path = path[:len(path)-1]
		state[id] = done
	}
	for _, o := range v.job.Operators {
		if state[o.ID] == unvisited && v.isOperator(o.ID) {
			visit(o.ID)
		}
	}
}

// isOperator reports whether id is the valid id of an operator.
func (v *validator) isOperator(id string) bool {
	return v.vertices[id].kind == KindOperator
}
