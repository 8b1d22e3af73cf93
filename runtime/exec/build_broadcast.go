package exec

import (
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/broadcast"
	"wasmstream.io/platform/runtime/operator/process"
	"wasmstream.io/platform/runtime/plan"
)

// broadcastStage builds subtask i of the broadcast_process operator v in
// front of next: a keyed process operator for the keyed input, whose calls
// read the broadcast states, inside the operator that runs the broadcast
// input. It tells task t which input a batch comes from: the keyed input's
// channels come first in the gate, then the broadcast input's. Each
// subtask's broadcast states are bounded by the job's keyed state budget,
// since every subtask holds them whole.
func (b *builder) broadcastStage(t *Task, v *plan.Vertex, i int, policy *operator.ErrorPolicy, next operator.Stage) (operator.Stage, error) {
	keyed, err := b.keyedState(t, v, i, v.Fn)
	if err != nil {
		return nil, err
	}
	store := broadcast.NewStore(b.module(v.Fn).Description.States, b.stateBudget().Limit())
	var onTimer *operator.GroupCall
	if v.OnTimer != nil {
		g := store.ReadOnly(b.processCall(t, v, i, v.OnTimer))
		onTimer = &g
	}
	batch := b.j.Plan.Job.UDF.BatchSize
	proc := process.New(v.ID, store.ReadOnly(b.processCall(t, v, i, v.Fn)), onTimer, keyed, batch, policy, next)
	proc.Clock = t.clockFunc()
	t.inputs = &operator.Inputs{Split: v.In[0].From.Parallelism}
	op := broadcast.New(broadcast.Config{
		Vertex: v.ID, Store: store, Keyed: proc, Broadcast: b.processCall(t, v, i, v.Broadcast),
		Inputs: t.inputs, BatchSize: batch, Policy: policy, Next: next,
	})
	op.Clock = t.clockFunc()
	return op, nil
}
