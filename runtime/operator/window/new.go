package window

import (
	"sync/atomic"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
)

// Config is what a window operator subtask is made of.
type Config struct {
	Vertex string
	Plan   *plan.Window
	// BatchSize bounds the results passed on at once and the groups of one
	// call.
	BatchSize int
	// Budget bounds the bytes the subtask buffers (keys, panes,
	// accumulators, records); 0: DefaultBudget.
	Budget int64
	Policy *operator.ErrorPolicy
	// Next receives the results; late the records too late for every
	// window (late_output), which are dropped and counted in lateCount
	// when late is nil.
	Next      operator.Stage
	Late      operator.Stage
	LateCount *atomic.Int64
	// Sides are the named side outputs a window_process, join or co_group
	// function writes; nil without.
	Sides *operator.SideOutputs
	// Fn is the window function, nil for a built-in aggregate (or a join
	// that emits pairs); GapFn gives dynamic session gaps; TriggerFn is a
	// custom trigger's function (kind trigger), which a custom trigger
	// needs.
	Fn, GapFn, TriggerFn *operator.GroupCall
	// EvictorFn is a custom evictor (kind evictor); nil without one.
	EvictorFn *operator.GroupCall
	// State is a window_process function's per-window State with the
	// number of states its module declares; nil without State.
	State  *state.Keyed
	States int
	// Join makes the operator a window Join of two inputs.
	Join *JoinConfig
	// Clock is the processing time: what processing-time windows follow
	// and what frames carry. nil means operator.NowMillis.
	Clock func() int64
	// Clearing, when set with State, is called just before the per-window
	// state of key's window [start, end) is cleared, with State set to that
	// key and window. Jobs leave it nil; platform udf test reads the state
	// there to print it.
	Clearing func(key []byte, start, end int64) error
}

// JoinConfig is what a window join adds: which input a batch comes from,
// and whether its function is a co_group function.
type JoinConfig struct {
	Inputs  *operator.Inputs
	CoGroup bool
}

// New makes a window operator subtask.
func New(cfg Config) *Operator {
	wp := cfg.Plan
	out := &operator.Out{Max: cfg.BatchSize, Next: cfg.Next, Sides: cfg.Sides}
	out.Tracer, _ = cfg.Next.(operator.Tracer)
	w := newWindowOp(cfg.Vertex, wp, cfg.LateCount, cfg.Policy, out, cfg.Late)
	if cfg.Budget > 0 {
		w.budget = cfg.Budget
	}
	if cfg.Clock != nil {
		w.clock = cfg.Clock
	}
	runner := func(kind abi.Kind) *operator.GroupRunner {
		if cfg.Fn == nil {
			return nil
		}
		return &operator.GroupRunner{Kind: kind, MaxGroups: cfg.BatchSize, Policy: cfg.Policy, Out: out, Call: *cfg.Fn, Clock: w.clock}
	}
	switch {
	case cfg.Join != nil:
		kind := abi.KindJoin
		if cfg.Join.CoGroup {
			kind = abi.KindCoGroup
		}
		w.fn = &windowJoinFunc{inputs: cfg.Join.Inputs, store: w.store, out: out, call: runner(kind), coGroup: cfg.Join.CoGroup, policy: cfg.Policy, wm: &w.wm}
	case wp.Builtin != "":
		w.fn = &builtinFunc{name: wp.Builtin, field: wp.Field, policy: cfg.Policy, out: out}
	case wp.FnKind == abi.KindWindowProcess:
		pc := runner(wp.FnKind)
		var st *windowState
		if cfg.State != nil {
			st = newWindowState(cfg.State, cfg.States, wp)
			st.clearing = cfg.Clearing
			pc.State, pc.Call.Env, w.state = st, &st.env, st
		}
		w.fn = &udfProcessFunc{call: pc, store: w.store, out: out, policy: cfg.Policy, wm: &w.wm, state: st}
	default:
		w.fn = &udfAccFunc{reduce: wp.FnKind == abi.KindReduce, call: runner(wp.FnKind), store: w.store, out: out, policy: cfg.Policy, wm: &w.wm}
	}
	w.gapCall = cfg.GapFn
	if w.trig != nil && w.trig.kind == trigCustom {
		w.trig.udf = &udfTrigger{call: cfg.TriggerFn, maxGroups: max(cfg.BatchSize, 1)}
	}
	if w.evict != nil && cfg.EvictorFn != nil {
		w.evict.custom = &operator.GroupRunner{Kind: abi.KindEvictor, MaxGroups: cfg.BatchSize, Policy: cfg.Policy, Out: out, Call: *cfg.EvictorFn, Clock: w.clock}
	}
	return w
}
