package plan

import (
	"encoding/json"
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/spec"
)

// wirePlan is a Plan as JSON: vertices and edges refer to each other by id,
// and each vertex finds its spec again in the job by id.
type wirePlan struct {
	Job      *spec.Job                  `json:"job"`
	Modules  map[string]abi.Description `json:"modules"`
	Vertices []wireVertex               `json:"vertices"`
	Edges    []wireEdge                 `json:"edges"`
}

type wireVertex struct {
	ID          string  `json:"id"`
	Kind        string  `json:"kind"`
	Parallelism int     `json:"parallelism"`
	Fn          *Func   `json:"fn,omitempty"`
	OnTimer     *Func   `json:"on_timer,omitempty"`
	Broadcast   *Func   `json:"broadcast,omitempty"`
	WatermarkFn *Func   `json:"watermark_fn,omitempty"`
	Window      *Window `json:"window,omitempty"`
	Join        *Join   `json:"join,omitempty"`
}

type wireEdge struct {
	From     string   `json:"from"`
	To       string   `json:"to"`
	Ship     Shipping `json:"ship"`
	KeyField string   `json:"key_field,omitempty"`
	KeyFn    *Func    `json:"key_fn,omitempty"`
	Side     string   `json:"side,omitempty"`
	// Late is how plans encoded before side outputs marked an edge of late
	// records (Side spec.LateOutput); read, never written.
	Late bool `json:"late,omitempty"`
}

// MarshalJSON encodes the plan with its job spec.
func (p *Plan) MarshalJSON() ([]byte, error) {
	w := wirePlan{Job: p.Job, Modules: p.Modules}
	for _, v := range p.Vertices {
		w.Vertices = append(w.Vertices, wireVertex{
			ID: v.ID, Kind: v.Kind, Parallelism: v.Parallelism,
			Fn: v.Fn, OnTimer: v.OnTimer, Broadcast: v.Broadcast, WatermarkFn: v.WatermarkFn, Window: v.Window, Join: v.Join,
		})
		for _, e := range v.Out {
			w.Edges = append(w.Edges, wireEdge{From: e.From.ID, To: e.To.ID, Ship: e.Ship, KeyField: e.KeyField, KeyFn: e.KeyFn, Side: e.Side})
		}
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes a plan that MarshalJSON encoded, linking vertices,
// edges and specs again. Edges keep the order they had: a join's left input
// is connected first.
func (p *Plan) UnmarshalJSON(data []byte) error {
	var w wirePlan
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	if w.Job == nil {
		return fmt.Errorf("plan: no job")
	}
	*p = Plan{Job: w.Job, Modules: w.Modules, byID: map[string]*Vertex{}}
	specs := map[string]*Vertex{}
	for i := range w.Job.Sources {
		specs[w.Job.Sources[i].ID] = &Vertex{Source: &w.Job.Sources[i]}
	}
	for i := range w.Job.Operators {
		specs[w.Job.Operators[i].ID] = &Vertex{Op: &w.Job.Operators[i]}
	}
	for i := range w.Job.Sinks {
		specs[w.Job.Sinks[i].ID] = &Vertex{Sink: &w.Job.Sinks[i]}
	}
	for _, wv := range w.Vertices {
		v, ok := specs[wv.ID]
		if !ok {
			return fmt.Errorf("plan: vertex %q is not in the job", wv.ID)
		}
		if p.byID[wv.ID] != nil {
			return fmt.Errorf("plan: vertex %q twice", wv.ID)
		}
		v.ID, v.Kind, v.Parallelism = wv.ID, wv.Kind, wv.Parallelism
		v.Fn, v.OnTimer, v.WatermarkFn, v.Window, v.Join = wv.Fn, wv.OnTimer, wv.WatermarkFn, wv.Window, wv.Join
		v.Broadcast = wv.Broadcast
		p.Vertices = append(p.Vertices, v)
		p.byID[v.ID] = v
	}
	for _, we := range w.Edges {
		from, to := p.byID[we.From], p.byID[we.To]
		if from == nil || to == nil {
			return fmt.Errorf("plan: edge %s -> %s names a missing vertex", we.From, we.To)
		}
		e := &Edge{From: from, To: to, Ship: we.Ship, KeyField: we.KeyField, KeyFn: we.KeyFn, Side: we.Side}
		if we.Late {
			e.Side = spec.LateOutput
		}
		from.Out = append(from.Out, e)
		to.In = append(to.In, e)
	}
	return nil
}
