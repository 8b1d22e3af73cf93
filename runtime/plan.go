package runtime

import (
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/spec"
)

// shipping says how records cross an edge.
type shipping int

const (
	// shipForward keeps a record in the same subtask index; with equal
	// parallelism and a single input the consumer is chained.
	shipForward shipping = iota
	// shipHash sends a record to the subtask owning its key group.
	shipHash
	// shipRebalance spreads records round robin.
	shipRebalance
	// shipBroadcast sends every record to every subtask.
	shipBroadcast
)

// vertex is one source, operator or sink of the job graph.
type vertex struct {
	id          string
	kind        string
	parallelism int
	source      *spec.Source
	op          *spec.Operator
	sink        *spec.Sink
	// fn is the module function the vertex runs, if any.
	fn *funcRef
	// in and out are the vertex's edges.
	in  []*edge
	out []*edge
}

// funcRef is a module function resolved at submission.
type funcRef struct {
	module *moduleEntry
	name   string
	index  int
}

// edge connects two vertices.
type edge struct {
	from, to *vertex
	ship     shipping
	// keyFn and keyField select the key before hash shipping.
	keyField string
	keyFn    *funcRef
}

// chained reports whether the edge is a direct call inside one task.
func (e *edge) chained() bool {
	return e.ship == shipForward && e.from.parallelism == e.to.parallelism && len(e.to.in) == 1
}

// plan is a validated job graph: vertices in topological order (every vertex
// after its inputs).
type plan struct {
	job      *spec.Job
	vertices []*vertex
	byID     map[string]*vertex
}

// moduleLookup finds an uploaded module by id.
type moduleLookup func(id string) (*moduleEntry, bool)

// unsupported names the spec features accepted by the parser that the runtime
// does not run yet, by field path.
func unsupported(j *spec.Job) []string {
	var out []string
	add := func(path string, set bool) {
		if set {
			out = append(out, path)
		}
	}
	for i, s := range j.Sources {
		p := fmt.Sprintf("sources[%d]", i)
		if s.Watermark != nil {
			add(p+".watermark", s.Watermark.Strategy != "" && s.Watermark.Strategy != "none")
		}
	}
	for i, o := range j.Operators {
		p := fmt.Sprintf("operators[%d]", i)
		add(p+".window", o.Window != nil)
		add(p+".window_all", o.WindowAll != nil)
		add(p+".aggregate", o.Aggregate != nil)
		add(p+".reduce", o.Reduce != nil)
		add(p+".process_window", o.ProcessWindow != nil)
		add(p+".process", o.Process != nil)
		add(p+".join", o.Join != nil)
		add(p+".late_output", o.LateOutput != "")
	}
	add("checkpoint", j.Checkpoint != nil)
	add("state", j.State != nil && j.State.Backend != "" && j.State.Backend != "memory")
	add("restart", j.Restart != nil && j.Restart.Strategy != "" && j.Restart.Strategy != "none")
	return out
}

// buildPlan turns a parsed job into a plan, resolving module functions.
func buildPlan(j *spec.Job, lookup moduleLookup) (*plan, error) {
	if paths := unsupported(j); len(paths) > 0 {
		return nil, fmt.Errorf("%w: %s: not supported yet", ErrInvalidJob, joinPaths(paths))
	}
	p := &plan{job: j, byID: map[string]*vertex{}}
	var problems []string
	resolve := func(path, module, function string, kind abi.Kind) *funcRef {
		m, ok := lookup(module)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s.module: no module %s (upload it first)", path, module))
			return nil
		}
		i := m.desc.Lookup(function)
		if i < 0 {
			problems = append(problems, fmt.Sprintf("%s.function: module %s has no function %q (it has %s)", path, module, function, m.functionList()))
			return nil
		}
		if got := m.desc.Functions[i].Kind; got != kind {
			problems = append(problems, fmt.Sprintf("%s.function: %q is a %s function, want %s", path, function, got, kind))
			return nil
		}
		return &funcRef{module: m, name: function, index: i}
	}
	add := func(v *vertex) { p.vertices = append(p.vertices, v); p.byID[v.id] = v }
	for i := range j.Sources {
		s := &j.Sources[i]
		add(&vertex{id: s.ID, kind: "source", parallelism: s.Parallelism, source: s})
	}
	for i := range j.Operators {
		o := &j.Operators[i]
		v := &vertex{id: o.ID, parallelism: o.Parallelism, op: o}
		path := fmt.Sprintf("operators[%d]", i)
		switch {
		case o.Map != nil:
			v.kind = string(abi.KindMap)
			v.fn = resolve(path+".map", o.Map.Module, o.Map.Function, abi.KindMap)
		case o.Filter != nil:
			v.kind = string(abi.KindFilter)
			v.fn = resolve(path+".filter", o.Filter.Module, o.Filter.Function, abi.KindFilter)
		case o.FlatMap != nil:
			v.kind = string(abi.KindFlatMap)
			v.fn = resolve(path+".flat_map", o.FlatMap.Module, o.FlatMap.Function, abi.KindFlatMap)
		}
		add(v)
	}
	for i := range j.Sinks {
		s := &j.Sinks[i]
		add(&vertex{id: s.ID, kind: "sink", parallelism: s.Parallelism, sink: s})
	}
	connect := func(from, to *vertex, keyBy *spec.KeyBy, partition, path string) {
		e := &edge{from: from, to: to, ship: shipForward}
		switch {
		case keyBy != nil:
			e.ship = shipHash
			e.keyField = keyBy.Field
			if keyBy.Function != "" {
				e.keyFn = resolve(path+".key_by", keyBy.Module, keyBy.Function, abi.KindKey)
			}
		case partition == "broadcast":
			e.ship = shipBroadcast
		case partition == "rebalance", partition == "" && from.parallelism != to.parallelism:
			e.ship = shipRebalance
		}
		from.out = append(from.out, e)
		to.in = append(to.in, e)
	}
	for i := range j.Operators {
		o := &j.Operators[i]
		connect(p.byID[o.Input], p.byID[o.ID], o.KeyBy, o.Partition, fmt.Sprintf("operators[%d]", i))
	}
	for i := range j.Sinks {
		s := &j.Sinks[i]
		connect(p.byID[s.Input], p.byID[s.ID], nil, s.Partition, fmt.Sprintf("sinks[%d]", i))
	}
	for i, s := range j.Sources {
		if s.Timestamp != nil && s.Timestamp.Function != nil {
			p.byID[s.ID].fn = resolve(fmt.Sprintf("sources[%d].timestamp", i), s.Timestamp.Function.Module, s.Timestamp.Function.Function, abi.KindTimestamp)
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrInvalidJob, joinPaths(problems))
	}
	return p, nil
}

func joinPaths(ps []string) string {
	s := ""
	for i, p := range ps {
		if i > 0 {
			s += "; "
		}
		s += p
	}
	return s
}

// modules lists the ids of the modules the plan uses.
func (p *plan) modules() []string {
	seen := map[string]bool{}
	var ids []string
	note := func(f *funcRef) {
		if f != nil && !seen[f.module.id] {
			seen[f.module.id] = true
			ids = append(ids, f.module.id)
		}
	}
	for _, v := range p.vertices {
		note(v.fn)
		for _, e := range v.out {
			note(e.keyFn)
		}
	}
	return ids
}
