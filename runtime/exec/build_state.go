package exec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/process"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
)

// stateBudget is the job's budget, shared by all its keyed state.
func (b *builder) stateBudget() *state.Budget {
	if b.budget == nil {
		limit := b.j.Plan.Job.State.Budget
		if limit == 0 {
			limit = b.j.Env.Budgets.KeyedState
		}
		b.budget = state.NewBudget(limit)
	}
	return b.budget
}

// keyedState opens the keyed state of subtask i of vertex v, in task t: the
// states the module of fn declares, with the operator's TTL overrides, over
// the key groups the subtask owns, in the job's backend, with TTL on the
// task's clock.
func (b *builder) keyedState(t *Task, v *plan.Vertex, i int, fn *plan.Func) (*state.Keyed, error) {
	job := b.j.Plan.Job
	descs, err := operator.StateDescriptors(b.module(fn).Description, v.Op.StateTTL)
	if err != nil {
		return nil, fmt.Errorf("operator[%s]: %w", v.ID, err)
	}
	cfg := state.Config{
		Backend:        job.State.Backend,
		MaxParallelism: job.MaxParallelism,
		Range:          state.RangeOf(job.MaxParallelism, v.Parallelism, i),
		States:         descs,
		Budget:         b.stateBudget(),
		Logger:         b.j.Log,
	}
	if t.time.scripted != nil {
		cfg.Clock = state.ClockFunc(t.clockFunc())
	}
	if cfg.Backend == state.BackendPebble {
		if b.j.Env.DataDir == "" {
			return nil, fmt.Errorf("operator[%s]: the pebble state backend needs a data directory", v.ID)
		}
		cfg.Dir = filepath.Join(b.j.Env.DataDir, "state", fmt.Sprintf("%s-%s-%d", b.j.ID, v.ID, i))
	}
	k, err := state.Open(cfg)
	if err != nil {
		return nil, fmt.Errorf("operator[%s]: %w", v.ID, err)
	}
	b.j.Counters[v.ID][i].State.Store(k)
	return k, nil
}

// processStage builds a keyed process operator for subtask i of v, with
// its side outputs.
func (b *builder) processStage(ctx context.Context, t *Task, v *plan.Vertex, i int, policy *operator.ErrorPolicy, next operator.Stage) (operator.Stage, error) {
	_, sides, err := b.sideOutputs(ctx, t, v, i)
	if err != nil {
		return nil, err
	}
	keyed, err := b.keyedState(t, v, i, v.Fn)
	if err != nil {
		return nil, errors.Join(err, sides.Close(ctx))
	}
	call := b.processCall(t, v, i, v.Fn)
	var onTimer *operator.GroupCall
	if v.OnTimer != nil {
		g := b.processCall(t, v, i, v.OnTimer)
		onTimer = &g
	}
	op := process.New(v.ID, call, onTimer, keyed, b.j.Plan.Job.UDF.BatchSize, policy, next)
	op.SetSideOutputs(sides)
	op.Clock = t.clockFunc()
	desc := b.module(v.Fn).Description
	if fn, retired := desc.MigrateFunction(), desc.RetiredStates(); fn >= 0 && len(retired) > 0 {
		op.SetMigration(fn, desc.Functions[fn].Name, retired)
	}
	return op, nil
}

// processCall prepares calls of a grouped function f for subtask i of v.
func (b *builder) processCall(t *Task, v *plan.Vertex, i int, f *plan.Func) operator.GroupCall {
	limits := b.j.Plan.Job.UDF
	pool := b.module(f).NewGuest(host.InstanceConfig{
		MemoryLimit: limits.MemoryLimit,
		CallTimeout: limits.CallTimeout.Duration,
		Attrs:       []slog.Attr{slog.String("job", b.j.ID), slog.String("vertex", v.ID), slog.Int("subtask", i)},
	})
	return operator.GroupCall{Module: f.Module, Function: f.Function, Fn: f.Index, Guest: t.stats.meter(v.ID, f.Function, pool)}
}
