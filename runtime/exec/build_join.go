package exec

import (
	"context"

	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/join"
	"wasmstream.io/platform/runtime/operator/window"
	"wasmstream.io/platform/runtime/plan"
)

// joinStage builds the join operator of v for subtask i in front of next,
// with its late records and side outputs, and tells task t how to tell its inputs apart.
func (b *builder) joinStage(ctx context.Context, t *Task, v *plan.Vertex, i int, c *Counters, policy *operator.ErrorPolicy, next operator.Stage) (operator.Stage, error) {
	late, sides, err := b.sideOutputs(ctx, t, v, i)
	if err != nil {
		return nil, err
	}
	t.inputs = &operator.Inputs{Split: v.In[0].From.Parallelism}
	if v.Join.Interval {
		return join.New(join.Config{
			Vertex: v.ID, Plan: v.Join, Inputs: t.inputs, Limit: b.stateBudget().Limit(), BatchSize: b.j.Plan.Job.UDF.BatchSize,
			Policy: policy, Next: next, Late: late, LateCount: &c.Late, Sides: sides, Fn: b.groupCall(v.ID, i, v.Fn),
		}), nil
	}
	return window.New(window.Config{
		Vertex: v.ID, Plan: v.Window, BatchSize: b.j.Plan.Job.UDF.BatchSize, Budget: b.j.Env.Budgets.WindowContents, Policy: policy, Next: next,
		Late: late, LateCount: &c.Late, Sides: sides, Fn: b.groupCall(v.ID, i, v.Fn), GapFn: b.groupCall(v.ID, i, v.Window.GapFn),
		Join: &window.JoinConfig{Inputs: t.inputs, CoGroup: v.Join.CoGroup}, Clock: t.clockFunc(),
	}), nil
}
