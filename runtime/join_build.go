package runtime

import (
	"context"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
)

// joinStage builds the join operator of v for subtask i in front of next,
// with its late output, and tells task t how to tell its inputs apart.
func (b *builder) joinStage(ctx context.Context, t *task, v *plan.Vertex, i int, c *counters, policy *operator.ErrorPolicy, next operator.Stage) (operator.Stage, error) {
	late, err := b.lateOutputs(ctx, t, v, i)
	if err != nil {
		return nil, err
	}
	t.inputs = &joinInputs{split: v.In[0].From.Parallelism}
	out := &operator.Out{Max: b.j.plan.Job.UDF.BatchSize, Next: next}
	var call *operator.GroupRunner
	if f := v.Fn; f != nil {
		kind := abi.KindJoin
		if v.Join.CoGroup {
			kind = abi.KindCoGroup
		}
		call = &operator.GroupRunner{Kind: kind, MaxGroups: b.j.plan.Job.UDF.BatchSize, Policy: policy, Out: out,
			Call: operator.GroupCall{Module: f.Module, Function: f.Function, Fn: f.Index, Guest: b.pool(v.ID, i, f)}}
	}
	if v.Join.Interval {
		j := newIntervalJoin(v.ID, v.Join, t.inputs, b.stateBudget().Limit(), c, out, late)
		if call != nil {
			j.fn = &intervalCall{call: call, policy: policy}
		}
		return j, nil
	}
	w := newWindowOp(v.ID, v.Window, c, policy, out, late)
	w.fn = &windowJoinFunc{inputs: t.inputs, store: w.store, out: out, call: call, coGroup: v.Join.CoGroup, policy: policy, wm: &w.wm}
	if f := v.Window.GapFn; f != nil {
		w.gapCall = &operator.GroupCall{Module: f.Module, Function: f.Function, Fn: f.Index, Guest: b.pool(v.ID, i, f)}
	}
	return w, nil
}
