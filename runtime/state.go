package runtime

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/spec"
	"wasmstream.io/platform/state"
)

// DefaultStateBudget is a job's keyed-state memory (memory backend) when
// neither its spec nor the worker sets one.
const DefaultStateBudget = 1 << 30

// stateBudget is the job's budget, shared by all its keyed state.
func (b *builder) stateBudget() *state.Budget {
	if b.budget == nil {
		limit := b.j.plan.job.State.Budget
		if limit == 0 {
			limit = b.j.mgr.cfg.StateBudget
		}
		if limit == 0 {
			limit = DefaultStateBudget
		}
		b.budget = state.NewBudget(limit)
	}
	return b.budget
}

// keyedState opens the keyed state of subtask i of vertex v: the states the
// module of fn declares, with the operator's TTL overrides, over the key
// groups the subtask owns, in the job's backend.
func (b *builder) keyedState(v *vertex, i int, fn *funcRef) (*state.Keyed, error) {
	job := b.j.plan.job
	descs, err := stateDescriptors(fn.module.desc, v.op.StateTTL)
	if err != nil {
		return nil, fmt.Errorf("operator[%s]: %w", v.id, err)
	}
	cfg := state.Config{
		Backend:        job.State.Backend,
		MaxParallelism: job.MaxParallelism,
		Range:          state.RangeOf(job.MaxParallelism, v.parallelism, i),
		States:         descs,
		Budget:         b.stateBudget(),
		Logger:         b.j.log,
	}
	if cfg.Backend == state.BackendPebble {
		if b.j.mgr.cfg.DataDir == "" {
			return nil, fmt.Errorf("operator[%s]: the pebble state backend needs a data directory", v.id)
		}
		cfg.Dir = filepath.Join(b.j.mgr.cfg.DataDir, "state", fmt.Sprintf("%s-%s-%d", b.j.id, v.id, i))
	}
	k, err := state.Open(cfg)
	if err != nil {
		return nil, fmt.Errorf("operator[%s]: %w", v.id, err)
	}
	return k, nil
}

// stateDescriptors are a module's declared states with the job's TTL
// overrides applied; a state's id is its index in the description.
func stateDescriptors(desc abi.Description, overrides []spec.StateTTL) ([]state.Descriptor, error) {
	out := make([]state.Descriptor, len(desc.States))
	for i, st := range desc.States {
		kind, err := state.ParseKind(st.Kind)
		if err != nil {
			return nil, err
		}
		out[i] = state.Descriptor{Name: st.Name, Kind: kind}
		if st.TTL != "" {
			if out[i].TTL.TTL, err = time.ParseDuration(st.TTL); err != nil {
				return nil, fmt.Errorf("state %q: ttl: %w", st.Name, err)
			}
		}
	}
	for _, o := range overrides {
		i := desc.LookupState(o.State)
		if i < 0 {
			return nil, fmt.Errorf("state_ttl: the module declares no state %q", o.State)
		}
		update, err := state.ParseUpdateType(o.UpdateType)
		if err != nil {
			return nil, fmt.Errorf("state_ttl %q: update_type: %w", o.State, err)
		}
		visibility, err := state.ParseVisibility(o.Visibility)
		if err != nil {
			return nil, fmt.Errorf("state_ttl %q: visibility: %w", o.State, err)
		}
		out[i].TTL = state.TTL{TTL: o.TTL.Duration, Update: update, Visibility: visibility}
	}
	return out, nil
}

// processStage builds a keyed process operator for subtask i of v.
func (b *builder) processStage(t *task, v *vertex, i int, policy *operator.ErrorPolicy, next operator.Stage) (operator.Stage, error) {
	keyed, err := b.keyedState(v, i, v.fn)
	if err != nil {
		return nil, err
	}
	call := b.processCall(t, v, i, v.fn)
	var onTimer *operator.GroupCall
	if v.onTimer != nil {
		g := b.processCall(t, v, i, v.onTimer)
		onTimer = &g
	}
	return newProcessOp(v.id, call, onTimer, keyed, b.j.plan.job.UDF.BatchSize, policy, next), nil
}

// processCall prepares calls of a grouped function f for subtask i of v.
func (b *builder) processCall(t *task, v *vertex, i int, f *funcRef) operator.GroupCall {
	limits := b.j.plan.job.UDF
	pool := f.module.mod.NewGuest(host.InstanceConfig{
		MemoryLimit: limits.MemoryLimit,
		CallTimeout: limits.CallTimeout.Duration,
		Attrs:       []slog.Attr{slog.String("job", b.j.id), slog.String("vertex", v.id), slog.Int("subtask", i)},
	})
	return operator.GroupCall{Module: f.module.id, Function: f.name, Fn: f.index, Guest: t.stats.meter(v.id, f.name, pool)}
}
