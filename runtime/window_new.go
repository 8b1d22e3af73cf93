package runtime

import (
	"sync/atomic"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
)

// windowConfig is what a window operator subtask is made of.
type windowConfig struct {
	vertex string
	plan   *plan.Window
	// batchSize bounds the results passed on at once and the groups of one
	// call.
	batchSize int
	policy    *operator.ErrorPolicy
	// next receives the results; late the records too late for every
	// window (late_output), which are dropped and counted in lateCount
	// when late is nil.
	next      operator.Stage
	late      operator.Stage
	lateCount *atomic.Int64
	// fn is the window function, nil for a built-in aggregate (or a join
	// that emits pairs); gapFn gives dynamic session gaps.
	fn, gapFn *operator.GroupCall
	// state is a window_process function's per-window state with the
	// number of states its module declares; nil without state.
	state  *state.Keyed
	states int
	// join makes the operator a window join of two inputs.
	join *windowJoin
}

// windowJoin is what a window join adds: which input a batch comes from,
// and whether its function is a co_group function.
type windowJoin struct {
	inputs  *joinInputs
	coGroup bool
}

// newWindow makes a window operator subtask.
func newWindow(cfg windowConfig) *windowOp {
	wp := cfg.plan
	out := &operator.Out{Max: cfg.batchSize, Next: cfg.next}
	w := newWindowOp(cfg.vertex, wp, cfg.lateCount, cfg.policy, out, cfg.late)
	runner := func(kind abi.Kind) *operator.GroupRunner {
		if cfg.fn == nil {
			return nil
		}
		return &operator.GroupRunner{Kind: kind, MaxGroups: cfg.batchSize, Policy: cfg.policy, Out: out, Call: *cfg.fn}
	}
	switch {
	case cfg.join != nil:
		kind := abi.KindJoin
		if cfg.join.coGroup {
			kind = abi.KindCoGroup
		}
		w.fn = &windowJoinFunc{inputs: cfg.join.inputs, store: w.store, out: out, call: runner(kind), coGroup: cfg.join.coGroup, policy: cfg.policy, wm: &w.wm}
	case wp.Builtin != "":
		w.fn = &builtinFunc{name: wp.Builtin, field: wp.Field, policy: cfg.policy, out: out}
	case wp.FnKind == abi.KindWindowProcess:
		pc := runner(wp.FnKind)
		var st *windowState
		if cfg.state != nil {
			st = newWindowState(cfg.state, cfg.states, wp)
			pc.State, pc.Call.Env, w.state = st, &st.env, st
		}
		w.fn = &udfProcessFunc{call: pc, store: w.store, out: out, policy: cfg.policy, wm: &w.wm, state: st}
	default:
		w.fn = &udfAccFunc{reduce: wp.FnKind == abi.KindReduce, call: runner(wp.FnKind), store: w.store, out: out, policy: cfg.policy, wm: &w.wm}
	}
	w.gapCall = cfg.gapFn
	return w
}
