package replay

import (
	"fmt"
	"strings"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/plan"
)

// route is the way from a JetStream source to the keyed operator: the
// record functions between them (maps, filters, flat maps), in order, and
// the edge that keys the operator's input.
type route struct {
	source *plan.Vertex
	steps  []*plan.Vertex
	keyBy  *plan.Edge
	op     *plan.Vertex
}

// keyed reports whether v is an operator replay drives by key: a process
// function or a window (not window_all) after key_by.
func keyed(v *plan.Vertex) bool {
	if len(v.In) != 1 || v.In[0].Ship != plan.ShipHash {
		return false
	}
	return v.Kind == string(abi.KindProcess) || v.Window != nil && !v.Window.All && v.Join == nil
}

// findOperator is the keyed operator id names, or the job's only one.
func findOperator(p *plan.Plan, id string) (*plan.Vertex, error) {
	if id != "" {
		v := p.Vertex(id)
		if v == nil || v.Op == nil {
			return nil, fmt.Errorf("%w: operator: the job has no operator %q", ErrBadRequest, id)
		}
		if !keyed(v) {
			return nil, fmt.Errorf("%w: operator %q is a %s operator, replay drives keyed process functions and windows", ErrNotKeyed, id, v.Kind)
		}
		return v, nil
	}
	var found []*plan.Vertex
	var names []string
	for _, v := range p.Vertices {
		if v.Op != nil && keyed(v) {
			found = append(found, v)
			names = append(names, v.ID)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("%w: the job has no keyed process function or window", ErrNotKeyed)
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("%w: operator: the job has several keyed operators (%s), name one", ErrBadRequest, strings.Join(names, ", "))
}

// findRoute walks from op back to its source through single-input record
// functions.
func findRoute(op *plan.Vertex) (*route, error) {
	r := &route{op: op, keyBy: op.In[0]}
	v := r.keyBy.From
	for v.Source == nil {
		switch k := abi.Kind(v.Kind); {
		case k == abi.KindMap, k == abi.KindFilter, k == abi.KindFlatMap, v.Op != nil && v.Op.Extract != nil:
		default:
			return nil, fmt.Errorf("%w: operator %q: its input passes through %s operator %q; replay re-runs maps, filters, flat maps and extracts only", ErrUnsupported, op.ID, v.Kind, v.ID)
		}
		if len(v.In) != 1 {
			return nil, fmt.Errorf("%w: operator %q: its input passes through %q, which has %d inputs", ErrUnsupported, op.ID, v.ID, len(v.In))
		}
		r.steps = append([]*plan.Vertex{v}, r.steps...)
		v = v.In[0].From
	}
	if v.Source.JetStream == nil {
		return nil, fmt.Errorf("%w: operator %q reads source %q, which is not a JetStream stream", ErrUnsupported, op.ID, v.ID)
	}
	r.source = v
	return r, nil
}
