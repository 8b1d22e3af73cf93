package exec

import (
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/broadcast"
	"wasmstream.io/platform/runtime/plan"
)

// broadcastStage builds subtask i of the broadcast_process operator v in
// front of next, and tells task t which input a batch comes from: the
// keyed input's channels come first in the gate, then the broadcast
// input's. Each subtask's broadcast states are bounded by the job's keyed
// state budget, since every subtask holds them whole.
func (b *builder) broadcastStage(t *Task, v *plan.Vertex, i int, policy *operator.ErrorPolicy, next operator.Stage) (operator.Stage, error) {
	keyed, err := b.keyedState(v, i, v.Fn)
	if err != nil {
		return nil, err
	}
	var onTimer *operator.GroupCall
	if v.OnTimer != nil {
		g := b.processCall(t, v, i, v.OnTimer)
		onTimer = &g
	}
	t.inputs = &operator.Inputs{Split: v.In[0].From.Parallelism}
	return broadcast.New(broadcast.Config{
		Vertex: v.ID, Process: b.processCall(t, v, i, v.Fn), OnTimer: onTimer, Broadcast: b.processCall(t, v, i, v.Broadcast),
		States: b.module(v.Fn).Description.States, Keyed: keyed, Inputs: t.inputs, Limit: b.stateBudget().Limit(),
		BatchSize: b.j.Plan.Job.UDF.BatchSize, Policy: policy, Next: next,
	}), nil
}
