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
	if v.Join.Interval {
		out := &operator.Out{Max: b.j.plan.Job.UDF.BatchSize, Next: next}
		j := newIntervalJoin(v.ID, v.Join, t.inputs, b.stateBudget().Limit(), c, out, late)
		if f := v.Fn; f != nil {
			call := &operator.GroupRunner{Kind: joinKind(v.Join), MaxGroups: b.j.plan.Job.UDF.BatchSize, Policy: policy, Out: out, Call: *b.groupCall(v.ID, i, f)}
			j.fn = &intervalCall{call: call, policy: policy}
		}
		return j, nil
	}
	return newWindow(windowConfig{
		vertex: v.ID, plan: v.Window, batchSize: b.j.plan.Job.UDF.BatchSize, policy: policy, next: next,
		late: late, lateCount: &c.late, fn: b.groupCall(v.ID, i, v.Fn), gapFn: b.groupCall(v.ID, i, v.Window.GapFn),
		join: &windowJoin{inputs: t.inputs, coGroup: v.Join.CoGroup},
	}), nil
}

// joinKind is the kind of a join operator's function.
func joinKind(jp *plan.Join) abi.Kind {
	if jp.CoGroup {
		return abi.KindCoGroup
	}
	return abi.KindJoin
}
