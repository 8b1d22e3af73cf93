package plan

import "wasmstream.io/platform/state"

// Subtask is one parallel instance of a chain of vertices: the unit that
// runs as one task, and that placement puts on a worker.
type Subtask struct {
	// Head is the chain's first vertex: a source, or a vertex fed through
	// the exchange.
	Head string `json:"head"`
	// Index is the subtask's index among the head's parallel instances.
	Index int `json:"index"`
	// Chain lists the vertices the subtask runs, head first, each calling
	// the next directly (forward edges of equal parallelism).
	Chain []string `json:"chain"`
	// KeyGroups are the key groups the subtask owns: its share of
	// max_parallelism, as hash edges route records to it.
	KeyGroups state.Range `json:"key_groups"`
}

// Subtasks is the execution graph: every subtask of every chain, chains in
// the plan's topological order.
func (p *Plan) Subtasks() []Subtask {
	var out []Subtask
	for _, v := range p.Vertices {
		if !v.ChainHead() {
			continue
		}
		chain := p.chain(v, nil)
		for i := 0; i < v.Parallelism; i++ {
			out = append(out, Subtask{Head: v.ID, Index: i, Chain: chain, KeyGroups: state.RangeOf(p.Job.MaxParallelism, v.Parallelism, i)})
		}
	}
	return out
}

// ChainHead reports whether v starts a task: it is not called directly by
// the vertex before it.
func (v *Vertex) ChainHead() bool {
	return !(len(v.In) == 1 && v.In[0].Chained())
}

// chain appends v and the vertices chained after it, depth first.
func (p *Plan) chain(v *Vertex, ids []string) []string {
	ids = append(ids, v.ID)
	for _, e := range v.Out {
		if e.Chained() {
			ids = p.chain(e.To, ids)
		}
	}
	return ids
}

// Guests counts the Wasm instances the plan's subtasks create: one per
// module function per subtask that runs it (a key selector runs in the
// subtasks that send to its edge). A guest runs on one instance at a time:
// a failed instance is closed before its replacement, the one that runs a
// failed batch again record by record, is made.
func (p *Plan) Guests() int {
	n := 0
	for _, v := range p.Vertices {
		fns := 0
		for _, f := range [...]*Func{v.Fn, v.OnTimer, v.Broadcast, v.WatermarkFn, v.LookupRequest} {
			if f != nil {
				fns++
			}
		}
		if v.Window != nil && v.Window.GapFn != nil {
			fns++
		}
		if v.Window != nil && v.Window.Trigger != nil && v.Window.Trigger.Fn != nil {
			fns++
		}
		if v.Window != nil && v.Window.Evictor != nil && v.Window.Evictor.Fn != nil {
			fns++
		}
		for _, e := range v.Out {
			if e.KeyFn != nil {
				fns++
			}
		}
		n += fns * v.Parallelism
	}
	return n
}
