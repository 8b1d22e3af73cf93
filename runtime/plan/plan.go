package plan

import (
	"errors"
	"fmt"
	"strings"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/spec"
)

// ErrInvalidJob wraps a job that names modules or functions that do not fit
// (missing module, missing function, wrong kind).
var ErrInvalidJob = errors.New("invalid job")

// Shipping says how records cross an edge.
type Shipping int

const (
	// ShipForward keeps a record in the same subtask index; with equal
	// parallelism and a single input the consumer is chained.
	ShipForward Shipping = iota
	// ShipHash sends a record to the subtask owning its key group.
	ShipHash
	// ShipRebalance spreads records round robin.
	ShipRebalance
	// ShipBroadcast sends every record to every subtask.
	ShipBroadcast
)

// String names the shipping as the API does.
func (s Shipping) String() string {
	switch s {
	case ShipHash:
		return "hash"
	case ShipRebalance:
		return "rebalance"
	case ShipBroadcast:
		return "broadcast"
	}
	return "forward"
}

// Vertex is one source, operator or sink of the job graph.
type Vertex struct {
	ID          string
	Kind        string
	Parallelism int
	Source      *spec.Source
	Op          *spec.Operator
	Sink        *spec.Sink
	// Fn is the module function the vertex runs, if any.
	Fn *Func
	// OnTimer is a process operator's on_timer function, if any.
	OnTimer *Func
	// Broadcast is a broadcast_process operator's process_broadcast
	// function; its Fn is the keyed input's process function.
	Broadcast *Func
	// LookupRequest is an async_lookup operator's lookup_request function,
	// if any (Fn is its lookup_result function).
	LookupRequest *Func
	// Window is the window of an aggregate, reduce or process_window operator.
	Window *Window
	// Join is the plan of a join operator.
	Join *Join
	// WatermarkFn is a source's punctuated watermark function.
	WatermarkFn *Func
	// In and Out are the vertex's edges.
	In  []*Edge
	Out []*Edge
}

// Func is a module function resolved at submission.
type Func struct {
	Module   string `json:"module"`
	Function string `json:"function"`
	// Index is the function's position in the module's self-description.
	Index int `json:"index"`
}

// Edge connects two vertices.
type Edge struct {
	From, To *Vertex
	Ship     Shipping
	// KeyField and KeyFn select the key before hash shipping; with
	// neither, records keep the keys they have (a kv sink's input).
	KeyField string
	KeyFn    *Func
	// Side names the side output of From the edge carries instead of its
	// results: one its function writes (side_outputs), or spec.LateOutput,
	// a window operator's or join's late records. Empty for the results.
	Side string
}

// Chained reports whether the edge is a direct call inside one task.
func (e *Edge) Chained() bool {
	return e.Ship == ShipForward && e.From.Parallelism == e.To.Parallelism && len(e.To.In) == 1
}

// Plan is a validated job graph: vertices in topological order (every vertex
// after its inputs).
type Plan struct {
	Job      *spec.Job
	Vertices []*Vertex
	// Modules are the self-descriptions of the modules the plan uses, by id.
	Modules map[string]abi.Description
	byID    map[string]*Vertex
}

// Lookup finds an uploaded module by id.
type Lookup func(id string) (abi.Description, bool)

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
		j.Checkpoint != nil && j.Checkpoint.Unaligned && j.Checkpoint.Mode == ModeAtLeastOnce)
	return out
}

// Build turns a parsed job into a plan, resolving module functions.
func Build(j *spec.Job, lookup Lookup) (*Plan, error) {
	if paths := unsupported(j); len(paths) > 0 {
		return nil, fmt.Errorf("%w: %s: not supported yet", ErrInvalidJob, joinPaths(paths))
	}
	p := &Plan{Job: j, byID: map[string]*Vertex{}, Modules: map[string]abi.Description{}}
	problems := scriptedTimeProblems(j) // scripted_time.go
	resolve := func(path, module, function string, kind abi.Kind) *Func {
		desc, ok := lookup(module)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s.module: no module %s (upload it first)", path, module))
			return nil
		}
		i := desc.Lookup(function)
		if i < 0 {
			problems = append(problems, fmt.Sprintf("%s.function: module %s has no function %q (it has %s)", path, module, function, functionList(desc)))
			return nil
		}
		if got := desc.Functions[i].Kind; got != kind {
			problems = append(problems, fmt.Sprintf("%s.function: %q is a %s function, want %s", path, function, got, kind))
			return nil
		}
		p.Modules[module] = desc
		return &Func{Module: module, Function: function, Index: i}
	}
	add := func(v *Vertex) { p.Vertices = append(p.Vertices, v); p.byID[v.ID] = v }
	for i := range j.Sources {
		s := &j.Sources[i]
		add(&Vertex{ID: s.ID, Kind: "source", Parallelism: s.Parallelism, Source: s})
	}
	for i := range j.Operators {
		o := &j.Operators[i]
		v := &Vertex{ID: o.ID, Parallelism: o.Parallelism, Op: o}
		path := fmt.Sprintf("operators[%d]", i)
		switch {
		case o.Map != nil:
			v.Kind = string(abi.KindMap)
			v.Fn = resolve(path+".map", o.Map.Module, o.Map.Function, abi.KindMap)
		case o.Filter != nil:
			v.Kind = string(abi.KindFilter)
			v.Fn = resolve(path+".filter", o.Filter.Module, o.Filter.Function, abi.KindFilter)
		case o.FlatMap != nil:
			v.Kind = string(abi.KindFlatMap)
			v.Fn = resolve(path+".flat_map", o.FlatMap.Module, o.FlatMap.Function, abi.KindFlatMap)
		case o.Extract != nil:
			v.Kind = o.Kind()
		case o.Aggregate != nil, o.Reduce != nil, o.ProcessWindow != nil:
			v.Kind = o.Kind()
			problems = append(problems, planWindow(j, o, v, path, resolve, p.Modules)...)
		case o.Process != nil:
			v.Kind = string(abi.KindProcess)
			problems = append(problems, planProcess(o, v, path, resolve, p.Modules)...)
		case o.Join != nil:
			v.Kind = o.Kind()
			problems = append(problems, planJoin(j, o, v, path, resolve)...)
		case o.BroadcastProcess != nil:
			v.Kind = o.Kind()
			problems = append(problems, planBroadcast(o, v, path, resolve, p.Modules)...) // broadcast_plan.go
		case o.AsyncLookup != nil:
			v.Kind = o.Kind()
			planLookup(o.AsyncLookup, v, path+".async_lookup", resolve) // lookup_plan.go
		}
		add(v)
	}
	for i := range j.Sinks {
		s := &j.Sinks[i]
		add(&Vertex{ID: s.ID, Kind: "sink", Parallelism: s.Parallelism, Sink: s})
	}
	connect := func(input string, to *Vertex, keyBy *spec.KeyBy, partition, path string) *Edge {
		id, side := j.Stream(input)
		from := p.byID[id]
		e := &Edge{From: from, To: to, Ship: ShipForward, Side: side}
		switch {
		case keyBy != nil:
			e.Ship = ShipHash
			e.KeyField = keyBy.Field
			if keyBy.Function != "" {
				e.KeyFn = resolve(path+".key_by", keyBy.Module, keyBy.Function, abi.KindKey)
			}
		case partition == "broadcast":
			e.Ship = ShipBroadcast
		case partition == "rebalance", partition == "" && from.Parallelism != to.Parallelism:
			e.Ship = ShipRebalance
		}
		from.Out = append(from.Out, e)
		to.In = append(to.In, e)
		return e
	}
	for i := range j.Operators {
		o := &j.Operators[i]
		if jo := o.Join; jo != nil {
			path := fmt.Sprintf("operators[%d].join", i)
			connect(jo.Left.Input, p.byID[o.ID], &jo.Left.KeyBy, "", path+".left")
			connect(jo.Right.Input, p.byID[o.ID], &jo.Right.KeyBy, "", path+".right")
			continue
		}
		if bp := o.BroadcastProcess; bp != nil {
			// The keyed input first: In[0] keyed, In[1] broadcast.
			connect(o.Input, p.byID[o.ID], o.KeyBy, "", fmt.Sprintf("operators[%d]", i))
			connect(bp.Broadcast, p.byID[o.ID], nil, "broadcast", fmt.Sprintf("operators[%d].broadcast_process", i))
			continue
		}
		connect(o.Input, p.byID[o.ID], o.KeyBy, o.Partition, fmt.Sprintf("operators[%d]", i))
	}
	for i := range j.Sinks {
		s := &j.Sinks[i]
		keyBy := sinkKeys(s)
		if s.Input != "" {
			connect(s.Input, p.byID[s.ID], keyBy, s.Partition, fmt.Sprintf("sinks[%d]", i))
			continue
		}
		for k := range j.Operators {
			if o := &j.Operators[k]; o.LateOutput == s.ID {
				connect(o.ID+"."+spec.LateOutput, p.byID[s.ID], keyBy, s.Partition, fmt.Sprintf("sinks[%d]", i))
			}
		}
	}
	for i, s := range j.Sources {
		if s.Timestamp != nil && s.Timestamp.Function != nil {
			p.byID[s.ID].Fn = resolve(fmt.Sprintf("sources[%d].timestamp", i), s.Timestamp.Function.Module, s.Timestamp.Function.Function, abi.KindTimestamp)
		}
		if w := s.Watermark; w != nil && w.Function != nil {
			p.byID[s.ID].WatermarkFn = resolve(fmt.Sprintf("sources[%d].watermark.function", i), w.Function.Module, w.Function.Function, abi.KindWatermark)
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrInvalidJob, joinPaths(problems))
	}
	return p, nil
}

// sinkKeys is how a sink's input is keyed: a kv sink's by the records' own
// keys, so that one subtask writes each key, in order; nil for the others.
func sinkKeys(s *spec.Sink) *spec.KeyBy {
	if s.KV != nil {
		return &spec.KeyBy{}
	}
	return nil
}

// functionList names a module's functions for messages.
func functionList(d abi.Description) string {
	names := make([]string, len(d.Functions))
	for i, f := range d.Functions {
		names[i] = fmt.Sprintf("%s (%s)", f.Name, f.Kind)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
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

// Vertex is the vertex named id, or nil.
func (p *Plan) Vertex(id string) *Vertex { return p.byID[id] }

// ModuleIDs lists the ids of the modules the plan uses.
func (p *Plan) ModuleIDs() []string {
	seen := map[string]bool{}
	var ids []string
	note := func(f *Func) {
		if f != nil && !seen[f.Module] {
			seen[f.Module] = true
			ids = append(ids, f.Module)
		}
	}
	for _, v := range p.Vertices {
		note(v.Fn)
		note(v.WatermarkFn)
		note(v.LookupRequest)
		if v.Window != nil {
			note(v.Window.GapFn)
			if t := v.Window.Trigger; t != nil {
				note(t.Fn)
			}
			if v.Window.Evictor != nil {
				note(v.Window.Evictor.Fn)
			}
		}
		for _, e := range v.Out {
			note(e.KeyFn)
		}
	}
	return ids
}
