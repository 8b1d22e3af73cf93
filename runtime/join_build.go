package runtime

import (
	"context"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
)

// joinStage builds the join operator of v for subtask i in front of next,
// with its late output, and tells task t how to tell its inputs apart.
func (b *builder) joinStage(ctx context.Context, t *task, v *vertex, i int, c *counters, policy *operator.ErrorPolicy, next operator.Stage) (operator.Stage, error) {
	late, err := b.lateOutputs(ctx, t, v, i)
	if err != nil {
		return nil, err
	}
	t.inputs = &joinInputs{split: v.in[0].from.parallelism}
	out := &operator.Out{Max: b.j.plan.job.UDF.BatchSize, Next: next}
	var call *windowCall
	if f := v.fn; f != nil {
		kind := abi.KindJoin
		if v.join.coGroup {
			kind = abi.KindCoGroup
		}
		call = &windowCall{kind: kind, maxGroups: b.j.plan.job.UDF.BatchSize, policy: policy, out: out,
			gc: operator.GroupCall{Module: f.module.id, Function: f.name, Fn: f.index, Guest: b.pool(v.id, i, f)}}
	}
	if v.join.interval {
		j := newIntervalJoin(v.id, v.join, t.inputs, b.stateBudget().Limit(), c, out, late)
		if call != nil {
			j.fn = &intervalCall{call: call, policy: policy}
		}
		return j, nil
	}
	w := newWindowOp(v.id, v.win, c, policy, out, late)
	w.fn = &windowJoinFunc{inputs: t.inputs, store: w.store, out: out, call: call, coGroup: v.join.coGroup, policy: policy, wm: &w.wm}
	if f := v.win.gapFn; f != nil {
		w.gapCall = &operator.GroupCall{Module: f.module.id, Function: f.name, Fn: f.index, Guest: b.pool(v.id, i, f)}
	}
	return w, nil
}
