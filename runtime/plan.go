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
	// onTimer is a process operator's on_timer function, if any.
	onTimer *funcRef
	// win is the window of an aggregate, reduce or process_window operator.
	win *windowPlan
	// join is the plan of a join operator.
	join *joinPlan
	// wmFn is a source's punctuated watermark function.
	wmFn *funcRef
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
	// late carries a window operator's late records to its late_output
	// sink instead of its results.
	late bool
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
	// As in Flink, unaligned checkpoints exist for exactly-once only: at
	// least once needs no alignment to begin with.
	add("checkpoint.unaligned with mode at_least_once (unaligned checkpoints need exactly_once)",
		j.Checkpoint != nil && j.Checkpoint.Unaligned && j.Checkpoint.Mode == modeAtLeastOnce)
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
		case o.Aggregate != nil, o.Reduce != nil, o.ProcessWindow != nil:
			v.kind = o.Kind()
			problems = append(problems, planWindow(j, o, v, path, resolve)...)
		case o.Process != nil:
			v.kind = string(abi.KindProcess)
			problems = append(problems, planProcess(o, v, path, resolve)...)
		case o.Join != nil:
			v.kind = o.Kind()
			problems = append(problems, planJoin(j, o, v, path, resolve)...)
		}
		add(v)
	}
	for i := range j.Sinks {
		s := &j.Sinks[i]
		add(&vertex{id: s.ID, kind: "sink", parallelism: s.Parallelism, sink: s})
	}
	connect := func(from, to *vertex, keyBy *spec.KeyBy, partition, path string) *edge {
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
		return e
	}
	for i := range j.Operators {
		o := &j.Operators[i]
		if jo := o.Join; jo != nil {
			path := fmt.Sprintf("operators[%d].join", i)
			connect(p.byID[jo.Left.Input], p.byID[o.ID], &jo.Left.KeyBy, "", path+".left")
			connect(p.byID[jo.Right.Input], p.byID[o.ID], &jo.Right.KeyBy, "", path+".right")
			continue
		}
		connect(p.byID[o.Input], p.byID[o.ID], o.KeyBy, o.Partition, fmt.Sprintf("operators[%d]", i))
	}
	for i := range j.Sinks {
		s := &j.Sinks[i]
		if s.Input != "" {
			connect(p.byID[s.Input], p.byID[s.ID], nil, s.Partition, fmt.Sprintf("sinks[%d]", i))
			continue
		}
		for k := range j.Operators {
			if o := &j.Operators[k]; o.LateOutput == s.ID {
				connect(p.byID[o.ID], p.byID[s.ID], nil, s.Partition, fmt.Sprintf("sinks[%d]", i)).late = true
			}
		}
	}
	for i, s := range j.Sources {
		if s.Timestamp != nil && s.Timestamp.Function != nil {
			p.byID[s.ID].fn = resolve(fmt.Sprintf("sources[%d].timestamp", i), s.Timestamp.Function.Module, s.Timestamp.Function.Function, abi.KindTimestamp)
		}
		if w := s.Watermark; w != nil && w.Function != nil {
			p.byID[s.ID].wmFn = resolve(fmt.Sprintf("sources[%d].watermark.function", i), w.Function.Module, w.Function.Function, abi.KindWatermark)
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
		note(v.wmFn)
		if v.win != nil {
			note(v.win.gapFn)
		}
		for _, e := range v.out {
			note(e.keyFn)
		}
	}
	return ids
}
