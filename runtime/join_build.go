package runtime

import (
	"context"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/window"
	"wasmstream.io/platform/runtime/plan"
)

// joinStage builds the join operator of v for subtask i in front of next,
// with its late output, and tells task t how to tell its inputs apart.
func (b *builder) joinStage(ctx context.Context, t *task, v *plan.Vertex, i int, c *counters, policy *operator.ErrorPolicy, next operator.Stage) (operator.Stage, error) {
	late, err := b.lateOutputs(ctx, t, v, i)
	if err != nil {
		return nil, err
	}
	t.inputs = &operator.Inputs{Split: v.In[0].From.Parallelism}
	if v.Join.Interval {
		out := &operator.Out{Max: b.j.plan.Job.UDF.BatchSize, Next: next}
		j := newIntervalJoin(v.ID, v.Join, t.inputs, b.stateBudget().Limit(), c, out, late)
		if f := v.Fn; f != nil {
			call := &operator.GroupRunner{Kind: joinKind(v.Join), MaxGroups: b.j.plan.Job.UDF.BatchSize, Policy: policy, Out: out, Call: *b.groupCall(v.ID, i, f)}
			j.fn = &intervalCall{call: call, policy: policy}
		}
		return j, nil
	}
	return window.New(window.Config{
		Vertex: v.ID, Plan: v.Window, BatchSize: b.j.plan.Job.UDF.BatchSize, Policy: policy, Next: next,
		Late: late, LateCount: &c.late, Fn: b.groupCall(v.ID, i, v.Fn), GapFn: b.groupCall(v.ID, i, v.Window.GapFn),
		Join: &window.JoinConfig{Inputs: t.inputs, CoGroup: v.Join.CoGroup},
	}), nil
}

// joinKind is the kind of a join operator's function.
func joinKind(jp *plan.Join) abi.Kind {
	if jp.CoGroup {
		return abi.KindCoGroup
	}
	return abi.KindJoin
}
