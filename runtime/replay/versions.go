package replay

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/process"
	"wasmstream.io/platform/runtime/operator/window"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
	"wasmstream.io/platform/watermark"
)

// openVersions builds and restores the recorded module's operator and,
// with Request.Module, the other module's.
func (r *run) openVersions(ctx context.Context) error {
	modules := []string{""}
	if r.req.Module != "" {
		modules = append(modules, r.req.Module)
	}
	for i, m := range modules {
		v := &version{report: r.report, keep: len(modules) == 2}
		if len(modules) == 2 {
			v.name = []string{VersionOld, VersionNew}[i]
		}
		r.versions = append(r.versions, v)
		if err := r.openVersion(ctx, v, m); err != nil {
			return err
		}
	}
	return nil
}

// swap is f, or the function of the same name in module when it is set.
func (r *run) swap(f *plan.Func, module string) (*plan.Func, *host.Module, error) {
	if f == nil {
		return nil, nil, nil
	}
	if module == "" {
		mod, err := r.module(f.Module)
		return f, mod, err
	}
	mod, err := r.module(module)
	if err != nil {
		return nil, nil, err
	}
	i := mod.Description.Lookup(f.Function)
	if i < 0 {
		return nil, nil, fmt.Errorf("%w: module: %s has no function %q, which operator %q calls", ErrBadRequest, module, f.Function, r.rt.op.ID)
	}
	if got, want := mod.Description.Functions[i].Kind, r.job.Modules[f.Module].Functions[f.Index].Kind; got != want {
		return nil, nil, fmt.Errorf("%w: module: function %q of %s is a %s function, the job's is %s", ErrBadRequest, f.Function, module, got, want)
	}
	return &plan.Func{Module: module, Function: f.Function, Index: i}, mod, nil
}

// keyedState opens a version's state: the key's key group alone, and in
// it the key's entries alone.
func (r *run) keyedState(v *version, mod *host.Module) (*state.Keyed, error) {
	op := r.rt.op
	descs, err := operator.StateDescriptors(mod.Description, op.Op.StateTTL)
	if err != nil {
		return nil, fmt.Errorf("operator[%s]: %w", op.ID, err)
	}
	v.states = mod.Description.States
	return state.Open(state.Config{
		MaxParallelism: r.job.Job.MaxParallelism, Range: state.Range{First: r.kg, Last: r.kg},
		States: descs, Budget: state.NewBudget(stateBudget), OnlyKey: r.req.Key,
	})
}

// groupCall is a traced grouped call of f for version v.
func (r *run) groupCall(v *version, f *plan.Func, mod *host.Module, onTimer bool) *operator.GroupCall {
	g := r.guest(mod)
	return &operator.GroupCall{Module: f.Module, Function: f.Function, Fn: f.Index, Guest: &tracedGuest{KeyedCaller: g, v: v, onTimer: onTimer}}
}

func (r *run) openVersion(ctx context.Context, v *version, module string) error {
	op := r.rt.op
	maxP := r.job.Job.MaxParallelism
	rng := state.Range{First: r.kg, Last: r.kg}
	fn, mod, err := r.swap(op.Fn, module)
	if err != nil {
		return err
	}
	col := &collector{v: v}
	if op.Window == nil {
		keyed, err := r.keyedState(v, mod)
		if err != nil {
			return err
		}
		var onTimer *operator.GroupCall
		if op.OnTimer != nil {
			tf, tmod, err := r.swap(op.OnTimer, module)
			if err != nil {
				_ = keyed.Close()
				return err
			}
			onTimer = r.groupCall(v, tf, tmod, true)
		}
		p := process.New(op.ID, *r.groupCall(v, fn, mod, false), onTimer, keyed, r.job.Job.UDF.BatchSize, r.policy(v, op.ID), col)
		p.Clock = func() int64 { return 0 }
		v.op = p
		srcs, err := r.snap.keyedState(ctx, op, maxP, r.kg)
		if err != nil {
			return err
		}
		if err := p.Restore(ctx, srcs, maxP, rng); err != nil {
			return err
		}
		return r.restored(v, keyed, p.Timers)
	}
	// A window's snapshot holds every key of the key group: outputs of
	// the others are left out.
	col.keep = func(rec *abi.Record) bool { return string(rec.Key) == string(r.req.Key) }
	cfg := window.Config{Vertex: op.ID, Plan: op.Window, BatchSize: r.job.Job.UDF.BatchSize, Policy: r.policy(v, op.ID),
		Next: col, Late: col, LateCount: &atomic.Int64{}, Clock: func() int64 { return 0 }}
	var keyed *state.Keyed
	if op.Window.States {
		if keyed, err = r.keyedState(v, mod); err != nil {
			return err
		}
		cfg.State, cfg.States = keyed, len(mod.Description.States)
	}
	if op.Window.Builtin == "" {
		cfg.Fn = r.groupCall(v, fn, mod, false)
	}
	if op.Window.GapFn != nil {
		gf, gmod, err := r.swap(op.Window.GapFn, module)
		if err != nil {
			return err
		}
		cfg.GapFn = r.groupCall(v, gf, gmod, false)
	}
	if t := op.Window.Trigger; t != nil && t.Fn != nil {
		tf, tmod, err := r.swap(t.Fn, module)
		if err != nil {
			return err
		}
		cfg.TriggerFn = r.groupCall(v, tf, tmod, false)
	}
	if e := op.Window.Evictor; e != nil && e.Fn != nil {
		ef, emod, err := r.swap(e.Fn, module)
		if err != nil {
			return err
		}
		cfg.EvictorFn = r.groupCall(v, ef, emod, false)
	}
	w := window.New(cfg)
	v.op = w
	srcs, err := r.snap.windowState(ctx, op, r.kg)
	if err != nil {
		return err
	}
	if err := w.Restore(ctx, srcs, maxP, rng); err != nil {
		return err
	}
	if keyed != nil {
		return r.restored(v, keyed, nil)
	}
	return nil
}

// restored reports the key's state and timers at the checkpoint.
func (r *run) restored(v *version, keyed *state.Keyed, timers func(abi.TimeDomain) []watermark.Timer) error {
	if err := keyed.SetKey(r.req.Key); err != nil {
		return err
	}
	for id, st := range v.states {
		if err := r.restoredState(v, keyed, id, st); err != nil {
			return fmt.Errorf("state %q: %w", st.Name, err)
		}
	}
	if timers == nil {
		return nil
	}
	for _, d := range []abi.TimeDomain{abi.EventTime, abi.ProcessingTime} {
		for _, t := range timers(d) {
			ts := t.Timestamp
			if err := v.emit(Event{Event: EventRestored, Op: "pending", Domain: domainName(d), Timestamp: &ts, Key: Bytes(clone(t.Key))}); err != nil {
				return err
			}
		}
	}
	return nil
}

// restoredState reports one state of the key: a value, each element of a
// list, each entry of a map.
func (r *run) restoredState(v *version, keyed *state.Keyed, id int, st abi.State) error {
	emit := func(mapKey, value []byte) error {
		return v.emit(Event{Event: EventRestored, State: st.Name, MapKey: Bytes(clone(mapKey)), Value: Bytes(clone(value))})
	}
	switch st.Kind {
	case "value":
		val, ok, err := keyed.Value(id)
		if err != nil || !ok {
			return err
		}
		return emit(nil, val)
	case "list":
		n, elems, err := keyed.List(id)
		if err != nil {
			return err
		}
		for ; n > 0; n-- {
			var e []byte
			if e, elems, err = lengthPrefixed(elems); err != nil {
				return err
			}
			if err := emit(nil, e); err != nil {
				return err
			}
		}
	case "map":
		n, entries, err := keyed.MapEntries(id)
		if err != nil {
			return err
		}
		for ; n > 0; n-- {
			var k, val []byte
			if k, entries, err = lengthPrefixed(entries); err != nil {
				return err
			}
			if val, entries, err = lengthPrefixed(entries); err != nil {
				return err
			}
			if err := emit(k, val); err != nil {
				return err
			}
		}
	}
	return nil
}

// lengthPrefixed splits a u32 little-endian length and its bytes off b.
func lengthPrefixed(b []byte) (head, rest []byte, err error) {
	if len(b) < 4 || uint64(len(b)-4) < uint64(binary.LittleEndian.Uint32(b)) {
		return nil, nil, fmt.Errorf("malformed state listing")
	}
	n := binary.LittleEndian.Uint32(b)
	return b[4 : 4+n], b[4+n:], nil
}
