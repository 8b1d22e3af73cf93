package broadcast

import (
	"context"
	"errors"
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/state"
)

// Config is what a broadcast process operator subtask is made of.
type Config struct {
	Vertex string
	// Store is the subtask's broadcast states.
	Store *Store
	// Keyed is the keyed side: a keyed process operator (Flink's
	// KeyedProcessFunction) whose function calls were made with
	// Store.ReadOnly, so that they read the broadcast states and cannot
	// write them, and whose snapshot is the keyed state and timers.
	Keyed operator.Stateful
	// Broadcast is the process_broadcast function, of the keyed side's
	// module.
	Broadcast operator.GroupCall
	// Inputs tells the keyed input (left) from the broadcast one (right).
	Inputs    *operator.Inputs
	BatchSize int
	Policy    *operator.ErrorPolicy
	Next      operator.Stage
}

// Operator runs a keyed broadcast process function. The keyed side is a
// keyed process operator whose calls see the broadcast states read-only;
// the broadcast side calls process_broadcast with a frame of one keyless
// group. The two inputs interleave as their batches reach the task, with no
// order between them (as in Flink): a keyed record may see the broadcast
// states before or after a rule that was sent earlier on the other input.
// Event time is the task's, the minimum over both inputs.
//
// A trap in any of its functions fails the job whatever on_udf_error says:
// the call may have changed state. Records a function reports as failed
// follow on_udf_error.
type Operator struct {
	vertex string
	keyed  operator.Stateful
	store  *Store
	env    broadcastEnv
	call   operator.GroupCall
	inputs *operator.Inputs
	policy *operator.ErrorPolicy
	next   operator.Stage
	batch  int
	wm     int64
	// Clock is the processing time the broadcast frames carry.
	Clock func() int64

	answer     operator.Answer
	out        []abi.Record
	headers    []abi.Header
	failed     []failed
	inputStart int
	// tracer is next when it is an operator.Tracer; inputs are then the
	// broadcast records the records of out answer.
	tracer  operator.Tracer
	answers []*abi.Record
}

// failed is a broadcast record the function failed, with its message.
type failed struct {
	index uint32
	msg   string
}

var _ operator.Stateful = (*Operator)(nil)

// New makes a broadcast process operator subtask. The keyed side passes
// its output to cfg.Next itself.
func New(cfg Config) *Operator {
	op := &Operator{vertex: cfg.Vertex, keyed: cfg.Keyed, store: cfg.Store, call: cfg.Broadcast, inputs: cfg.Inputs,
		policy: cfg.Policy, next: cfg.Next, batch: max(cfg.BatchSize, 1), wm: abi.NoWatermark, Clock: operator.NowMillis}
	op.env.store = op.store
	op.call.Env = &op.env
	op.tracer, _ = cfg.Next.(operator.Tracer)
	return op
}

// Store is the subtask's broadcast states.
func (op *Operator) Store() *Store { return op.store }

func (op *Operator) Process(ctx context.Context, recs []abi.Record) error {
	if !op.inputs.Right {
		return op.keyed.Process(ctx, recs)
	}
	for len(recs) > 0 {
		n := min(len(recs), op.batch)
		if err := op.broadcast(ctx, recs[:n]); err != nil {
			return err
		}
		recs = recs[n:]
	}
	return nil
}

// broadcast runs process_broadcast over one batch of broadcast records.
func (op *Operator) broadcast(ctx context.Context, recs []abi.Record) error {
	op.call.Begin(abi.OpNone, op.wm, op.Clock())
	op.call.Add(&abi.GroupHead{}, recs)
	op.out, op.headers, op.failed, op.answers = op.out[:0], op.headers[:0], op.failed[:0], op.answers[:0]
	op.answer.Reset("record")
	err := op.call.Run(ctx, true, func(e *abi.Entry) error { return op.answered(e, recs) })
	if err != nil {
		var budget *state.BudgetError
		if errors.As(err, &budget) {
			return fmt.Errorf("operator[%s]: %w", op.vertex, budget)
		}
		return fmt.Errorf("operator[%s]: %w", op.vertex, err)
	}
	if op.tracer != nil {
		op.tracer.Answers(op.answers)
	}
	if err := op.next.Process(ctx, op.out); err != nil {
		return err
	}
	for _, f := range op.failed {
		cause := fmt.Errorf("udf[%s] function[%s]: %s", op.call.Module, op.call.Function, f.msg)
		if err := op.policy.RecordFailed(ctx, &recs[f.index], cause); err != nil {
			return fmt.Errorf("process_broadcast: %w", err)
		}
	}
	return nil
}

// answered takes one entry of a process_broadcast answer: a record it emits
// over the broadcast record it answers, or the error that fails that record.
func (op *Operator) answered(e *abi.Entry, recs []abi.Record) error {
	first, verdict, err := op.answer.Next(e)
	if err != nil {
		return op.call.BadOutput(err)
	}
	if first {
		op.inputStart = len(op.out)
	}
	if e.Tag != abi.TagError && e.Tag != abi.TagRecord {
		return op.call.BadOutput(fmt.Errorf("process_broadcast function wrote a %s entry", operator.TagName(e.Tag)))
	}
	switch verdict {
	case operator.Fail:
		op.out = op.out[:op.inputStart]
		if op.tracer != nil {
			op.answers = op.answers[:op.inputStart]
		}
		op.failed = append(op.failed, failed{e.Index, string(e.Message)})
	case operator.Emit:
		out := e.Apply(&recs[e.Index])
		if e.Flags&abi.HasHeaders != 0 {
			start := len(op.headers)
			op.headers = append(op.headers, e.Headers...)
			out.Headers = op.headers[start:len(op.headers):len(op.headers)]
		}
		op.out = append(op.out, out)
		if op.tracer != nil {
			op.answers = append(op.answers, &recs[e.Index])
		}
	}
	return nil
}

func (op *Operator) Advance(ctx context.Context, wm int64) error {
	op.wm = max(op.wm, wm)
	return op.keyed.Advance(ctx, wm)
}

func (op *Operator) Tick(ctx context.Context, now int64) error { return op.keyed.Tick(ctx, now) }
func (op *Operator) Finish(ctx context.Context) error          { return op.keyed.Finish(ctx) }

func (op *Operator) Close(ctx context.Context) error {
	return errors.Join(op.call.Guest.Close(ctx), op.keyed.Close(ctx))
}
