package broadcast

import (
	"context"
	"strings"
	"testing"

	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/operator/process"
	"wasmstream.io/platform/state"
)

// opConfig names what a test operator runs: the module of udfs/, its
// keyed and broadcast functions, and subtask i of p.
type opConfig struct {
	module, process, broadcast string
	p, i                       int
	limit                      int64
}

// newOp makes a broadcast process operator over a real module, whose keyed
// input is the left one and broadcast input the right one.
func newOp(t testing.TB, c opConfig, next operator.Stage) (*Operator, *operator.Inputs) {
	t.Helper()
	mod := optest.Module(t, c.module)
	descs, err := operator.StateDescriptors(mod.Description, nil)
	if err != nil {
		t.Fatal(err)
	}
	keyed, err := state.Open(state.Config{MaxParallelism: 128, Range: state.RangeOf(128, c.p, c.i), States: descs})
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string) operator.GroupCall {
		fn := mod.Description.Lookup(name)
		if fn < 0 {
			t.Fatalf("module %s has no function %s", c.module, name)
		}
		return operator.GroupCall{Module: c.module, Function: name, Fn: fn, Guest: mod.NewGuest(host.InstanceConfig{})}
	}
	policy, _ := optest.FailPolicy("rules")
	in := &operator.Inputs{Split: 1}
	store := NewStore(mod.Description.States, c.limit)
	proc := process.New("rules", store.ReadOnly(call(c.process)), nil, keyed, 64, policy, next)
	proc.Clock = func() int64 { return 0 }
	op := New(Config{Vertex: "rules", Store: store, Keyed: proc, Broadcast: call(c.broadcast), Inputs: in, BatchSize: 64, Policy: policy, Next: next})
	op.Clock = proc.Clock
	t.Cleanup(func() { _ = op.Close(context.Background()) })
	return op, in
}

// run gives the steps to op: "R ..." a batch of the broadcast input, "L
// ..." one of the keyed input, "wm N" a watermark.
func run(t testing.TB, op *Operator, in *operator.Inputs, steps []optest.JoinStep) error {
	t.Helper()
	for _, st := range steps {
		if err := st.Apply(context.Background(), op, in); err != nil {
			return err
		}
	}
	return nil
}

// rulesSteps change the rules between events: a rule set, another added,
// one changed and one removed, and events before any rule.
var rulesSteps = []optest.JoinStep{
	`L u1@1 {"amount":50}`,
	`R @2 {"rule":"big","min":100};@2 {"rule":"any","min":0}`,
	`L u1@3 {"amount":150};u2@4 {"amount":20};u1@5 {"amount":99}`,
	`R @6 {"rule":"big","min":10};@6 {"rule":"any"}`,
	`L u2@7 {"amount":20};u3@8 {"amount":9}`,
	`wm 8`,
	`R @9 {"rule":"tiny","min":1}`,
	`L u3@10 {"amount":9}`,
	`wm max`,
}

// rulesWant is what rulesSteps produce: each event meets the rules as they
// are when it arrives, in rule name order, and a user's hits go on across
// rule changes.
var rulesWant = []string{
	`u1@3 {"user":"u1","rule":"any","amount":150,"hits":1}`,
	`u1@3 {"user":"u1","rule":"big","amount":150,"hits":2}`,
	`u1@5 {"user":"u1","rule":"any","amount":99,"hits":3}`,
	`u2@4 {"user":"u2","rule":"any","amount":20,"hits":1}`,
	`u2@7 {"user":"u2","rule":"big","amount":20,"hits":2}`,
	`wm 8`,
	`u3@10 {"user":"u3","rule":"tiny","amount":9,"hits":1}`,
	`wm max`,
}

// Rules set, changed and removed mid-stream apply to the events after
// them, at once.
func TestRulesChangeMidStream(t *testing.T) {
	tape := &optest.Tape{}
	op, in := newOp(t, opConfig{module: "rules", process: "match", broadcast: "update", p: 1}, tape)
	if err := run(t, op, in, rulesSteps); err != nil {
		t.Fatal(err)
	}
	optest.CheckLines(t, "output", tape.Lines, rulesWant)
	n, enc := op.Store().Entries(0)
	if n != 2 || string(enc) != "\x03\x00\x00\x00big\x02\x00\x00\x0010\x04\x00\x00\x00tiny\x01\x00\x00\x001" {
		t.Fatalf("broadcast state: %d entries %q", n, enc)
	}
}

// A keyed-side write of a broadcast state and a broadcast-side use of
// keyed state fail the call with an error naming the state; a bad rule
// fails its record through on_udf_error.
func TestBroadcastStateAccessErrors(t *testing.T) {
	tests := []struct {
		name, process, broadcast string
		steps                    []optest.JoinStep
		want                     string
	}{
		{"keyed side writes", "tamper", "update", []optest.JoinStep{`L u1@1 {"amount":1}`},
			`map_put: broadcast state "rules" is read-only in process and on_timer functions`},
		{"broadcast side reads keyed state", "match", "peek", []optest.JoinStep{`R @1 {"rule":"a","min":1}`},
			`value_get on keyed state "hits": process_broadcast has no current key`},
		{"rule without a name", "match", "update", []optest.JoinStep{`R @1 {"min":1}`},
			`no string field "rule"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, in := newOp(t, opConfig{module: "rules", process: tt.process, broadcast: tt.broadcast, p: 1}, &optest.Tape{})
			err := run(t, op, in, tt.steps)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
		})
	}
}

// The broadcast states stay within their budget: a rule past it fails the
// call with ErrBudget's message, naming the state.
func TestBroadcastStateBudget(t *testing.T) {
	op, in := newOp(t, opConfig{module: "rules", process: "match", broadcast: "update", p: 1, limit: 200}, &optest.Tape{})
	if err := run(t, op, in, []optest.JoinStep{`R @1 {"rule":"a","min":1};@1 {"rule":"b","min":2}`}); err != nil {
		t.Fatal(err)
	}
	err := run(t, op, in, []optest.JoinStep{optest.JoinStep(`R @1 {"rule":"` + strings.Repeat("x", 100) + `","min":3}`)})
	if err == nil || !strings.Contains(err.Error(), `broadcast state "rules": broadcast state budget exceeded`) {
		t.Fatalf("got %v", err)
	}
	if n, _ := op.Store().Entries(0); n != 2 || op.Store().Bytes() != 2*(1+1+entryOverhead) {
		t.Fatalf("%d entries, %d bytes", n, op.Store().Bytes())
	}
}

// The keyed side's frames carry the task's watermark: the minimum over both
// inputs, which the task's gate computes, reaches the operator as one.
func TestBroadcastWatermarkPassesThrough(t *testing.T) {
	tape := &optest.Tape{}
	op, in := newOp(t, opConfig{module: "rules", process: "match", broadcast: "update", p: 1}, tape)
	if err := run(t, op, in, []optest.JoinStep{"wm 5", "wm 7"}); err != nil {
		t.Fatal(err)
	}
	optest.CheckLines(t, "output", tape.Lines, []string{"wm 5", "wm 7"})
	if op.wm != 7 {
		t.Fatalf("watermark %d", op.wm)
	}
}
