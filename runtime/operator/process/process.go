package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/state"
	"wasmstream.io/platform/watermark"
)

// Operator runs a keyed process function (Flink's KeyedProcessFunction)
// after a key_by: each batch is grouped by key, one group per key in
// arrival order, and the whole batch goes to the module in one call whose
// state and timer imports act on the subtask's keyed state and timer
// service. Timers that fire when the watermark (advance) or the clock
// (tick) reaches them go to the on_timer function, a batch of timers per
// call, before the watermark moves on.
//
// A trap in either function fails the job whatever on_udf_error says: the
// call may have changed state before it failed, and running its records
// again would apply those changes twice. Records the function reports as
// failed follow on_udf_error. State past its budget fails the job.
type Operator struct {
	vertex    string
	call      operator.GroupCall
	onTimer   *operator.GroupCall
	keyed     *state.Keyed
	timers    *watermark.TimerService
	env       operator.KeyedEnv
	batchSize int
	policy    *operator.ErrorPolicy
	next      operator.Stage
	// sides are the operator's side outputs; nil without.
	sides *operator.SideOutputs
	wm    int64

	// sorter orders a batch by key, keeping arrival order within a key;
	// sorted is the batch in that order, as the frame carries it.
	sorter  keyOrder
	sorted  []abi.Record
	out     []abi.Record
	headers []abi.Header
	failed  []failedInput
	// answer reads a call's answer; inputStart is where the current
	// input's records begin in out.
	answer     operator.Answer
	inputStart int
	// fired collects due timers; collect is its bound appender.
	fired   []watermark.Timer
	collect func(watermark.Timer) error
	// Clock is the processing time the frames carry; New sets
	// operator.NowMillis.
	Clock func() int64
	// tracer is next when it is an operator.Tracer; inputs are then the
	// inputs the records of out answer.
	tracer operator.Tracer
	inputs []*abi.Record
	// migration converts retired states after a restore; nil without.
	migration *migration
}

// failedInput is an input (record or timer) the function failed, with its
// error entry's message.
type failedInput struct {
	index uint32
	msg   string
}

// errBatchFull stops collecting timers once a call's worth is due.
var errBatchFull = errors.New("timer batch full")

// SetSideOutputs gives the operator its side outputs (before it runs).
func (op *Operator) SetSideOutputs(s *operator.SideOutputs) { op.sides = s }

func New(vertex string, call operator.GroupCall, onTimer *operator.GroupCall, keyed *state.Keyed, batchSize int, policy *operator.ErrorPolicy, next operator.Stage) *Operator {
	op := &Operator{vertex: vertex, call: call, onTimer: onTimer, keyed: keyed, timers: watermark.NewTimerService(),
		batchSize: batchSize, policy: policy, next: next, wm: abi.NoWatermark, Clock: operator.NowMillis}
	op.tracer, _ = next.(operator.Tracer)
	op.env = operator.NewKeyedEnv(keyed, op.timers)
	op.call.Env = &op.env
	if onTimer != nil {
		onTimer.Env = &op.env
	}
	op.collect = func(t watermark.Timer) error {
		op.fired = append(op.fired, t)
		if len(op.fired) >= op.batchSize {
			return errBatchFull
		}
		return nil
	}
	return op
}

// keyOrder sorts positions of a batch by key, stably.
type keyOrder struct {
	recs  []abi.Record
	order []int
}

func (k *keyOrder) Len() int { return len(k.order) }
func (k *keyOrder) Less(i, j int) bool {
	return bytes.Compare(k.recs[k.order[i]].Key, k.recs[k.order[j]].Key) < 0
}
func (k *keyOrder) Swap(i, j int) { k.order[i], k.order[j] = k.order[j], k.order[i] }

func (op *Operator) Process(ctx context.Context, recs []abi.Record) error {
	for len(recs) > 0 {
		n := min(len(recs), op.batchSize)
		if err := op.chunk(ctx, recs[:n]); err != nil {
			return err
		}
		recs = recs[n:]
	}
	return nil
}

// chunk runs the process function over one batch.
func (op *Operator) chunk(ctx context.Context, recs []abi.Record) error {
	op.sorter.recs = recs
	op.sorter.order = op.sorter.order[:0]
	for i := range recs {
		op.sorter.order = append(op.sorter.order, i)
	}
	sort.Stable(&op.sorter)
	op.sorted = op.sorted[:0]
	for _, i := range op.sorter.order {
		op.sorted = append(op.sorted, recs[i])
	}
	op.call.Begin(abi.OpNone, op.wm, op.Clock())
	op.env.Begin()
	for start := 0; start < len(op.sorted); {
		end := start + 1
		for end < len(op.sorted) && bytes.Equal(op.sorted[end].Key, op.sorted[start].Key) {
			end++
		}
		key := op.sorted[start].Key
		op.env.Add(key, nil)
		op.call.Add(&abi.GroupHead{Key: key}, op.sorted[start:end])
		start = end
	}
	op.out, op.headers, op.failed, op.inputs = op.out[:0], op.headers[:0], op.failed[:0], op.inputs[:0]
	op.sides.MarkCall()
	op.answer.Reset("record")
	err := op.call.Run(ctx, true, func(e *abi.Entry) error {
		return op.answered(e, &op.call, "process", op.sorted)
	})
	if err != nil {
		op.sides.DropCall()
		return op.failure(err)
	}
	if err := op.pass(ctx); err != nil {
		return err
	}
	return op.reportFailed(ctx, op.sorted, "process", &op.call)
}

// pass passes a call's results on, then its side records.
func (op *Operator) pass(ctx context.Context) error {
	if op.tracer != nil {
		op.tracer.Answers(op.inputs)
	}
	if err := op.next.Process(ctx, op.out); err != nil {
		return err
	}
	return op.sides.Flush(ctx)
}

// answered takes one entry of a process or on_timer call's answer: a record
// it emits over the input (record or timer) it answers, or the error that
// fails that input, dropping what the input emitted.
func (op *Operator) answered(e *abi.Entry, g *operator.GroupCall, kind string, inputs []abi.Record) error {
	first, verdict, err := op.answer.Next(e)
	if err != nil {
		return g.BadOutput(err)
	}
	if first {
		op.inputStart = len(op.out)
		op.sides.MarkInput()
	}
	if e.Tag != abi.TagError && e.Tag != abi.TagRecord && e.Tag != abi.TagOutput {
		return g.BadOutput(fmt.Errorf("%s function wrote a %s entry", kind, operator.TagName(e.Tag)))
	}
	side := -1
	if verdict == operator.Emit && e.Tag == abi.TagOutput {
		if side = op.sides.Find(e.Output); side < 0 {
			op.answer.FailInput()
			verdict = operator.Fail
			e.Message = []byte(op.sides.Undeclared(e.Output).Error())
		}
	}
	switch {
	case verdict == operator.Fail:
		op.out = op.out[:op.inputStart]
		op.sides.DropInput()
		if op.tracer != nil {
			op.inputs = op.inputs[:op.inputStart]
		}
		op.failed = append(op.failed, failedInput{e.Index, string(e.Message)})
	case verdict == operator.Emit && side >= 0:
		r := e.Apply(&inputs[e.Index])
		op.sides.Emit(side, r.Key, r.Value, r.Timestamp, r.Headers)
	case verdict == operator.Emit:
		op.out = append(op.out, op.emitted(&inputs[e.Index], e))
		if op.tracer != nil {
			op.inputs = append(op.inputs, op.input(kind, inputs, e.Index))
		}
	}
	return nil
}

// input is input i of a call: for a process call, the record in the batch
// Process was given (inputs holds copies of them, in key order); for an
// on_timer call, the timer in inputs.
func (op *Operator) input(kind string, inputs []abi.Record, i uint32) *abi.Record {
	if kind == "process" {
		return &op.sorter.recs[op.sorter.order[i]]
	}
	return &inputs[i]
}

// emitted builds a record entry's record over the one it inherits from.
func (op *Operator) emitted(base *abi.Record, e *abi.Entry) abi.Record {
	out := e.Apply(base)
	if e.Flags&abi.HasHeaders != 0 {
		start := len(op.headers)
		op.headers = append(op.headers, e.Headers...)
		out.Headers = op.headers[start:len(op.headers):len(op.headers)]
	}
	return out
}

// reportFailed applies the error policy to the inputs (records or timers)
// the function reported as failed.
func (op *Operator) reportFailed(ctx context.Context, inputs []abi.Record, what string, g *operator.GroupCall) error {
	for _, f := range op.failed {
		cause := fmt.Errorf("udf[%s] function[%s]: %s", g.Module, g.Function, f.msg)
		if err := op.policy.RecordFailed(ctx, op.input(what, inputs, f.index), cause); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}

// failure turns a failed call into the operator's error: the budget error
// as it is (it says what to do), anything else as the call's failure.
func (op *Operator) failure(err error) error {
	var budget *state.BudgetError
	if errors.As(err, &budget) {
		return fmt.Errorf("operator[%s]: %w", op.vertex, budget)
	}
	return fmt.Errorf("operator[%s]: %w", op.vertex, err)
}

func (op *Operator) Advance(ctx context.Context, wm int64) error {
	if wm > op.wm {
		op.wm = wm
	}
	if err := op.fire(ctx, abi.EventTime, wm); err != nil {
		return err
	}
	if err := op.sides.Advance(ctx, wm); err != nil {
		return err
	}
	return op.next.Advance(ctx, wm)
}

func (op *Operator) Tick(ctx context.Context, now int64) error {
	if err := op.fire(ctx, abi.ProcessingTime, now); err != nil {
		return err
	}
	if err := op.sides.Tick(ctx, now); err != nil {
		return err
	}
	return op.next.Tick(ctx, now)
}

// fire runs the on_timer function over the domain's timers due at upTo, a
// batch at a time, until none is due (timers it registers may be).
func (op *Operator) fire(ctx context.Context, domain abi.TimeDomain, upTo int64) error {
	for {
		op.fired = op.fired[:0]
		if err := op.timers.Advance(domain, upTo, op.collect); err != nil && !errors.Is(err, errBatchFull) {
			return err
		}
		if len(op.fired) == 0 {
			return nil
		}
		if err := op.callTimers(ctx, domain); err != nil {
			return err
		}
	}
}

// callTimers runs the on_timer function over op.fired: one group per timer.
func (op *Operator) callTimers(ctx context.Context, domain abi.TimeDomain) error {
	g := op.onTimer
	if g == nil {
		return fmt.Errorf("operator[%s]: %d timers fired and the operator has no on_timer function", op.vertex, len(op.fired))
	}
	g.Begin(abi.OpNone, op.wm, op.Clock())
	op.env.Begin()
	op.sorted = op.sorted[:0]
	for _, t := range op.fired {
		op.env.Add(t.Key, t.Namespace)
		g.Add(&abi.GroupHead{Flags: abi.GroupTimer, Key: t.Key, TimerTime: t.Timestamp, TimerDomain: domain}, nil)
		op.sorted = append(op.sorted, abi.Record{Key: t.Key, Timestamp: t.Timestamp})
	}
	op.out, op.headers, op.failed, op.inputs = op.out[:0], op.headers[:0], op.failed[:0], op.inputs[:0]
	op.sides.MarkCall()
	op.answer.Reset("timer")
	err := g.Run(ctx, false, func(e *abi.Entry) error {
		return op.answered(e, g, "on_timer", op.sorted)
	})
	if err != nil {
		op.sides.DropCall()
		return op.failure(err)
	}
	if err := op.pass(ctx); err != nil {
		return err
	}
	return op.reportFailed(ctx, op.sorted, "on_timer", g)
}

// Timers lists the domain's registered timers in firing order. The slices
// view the operator's own bytes: they are valid until it next processes,
// advances or ticks. platform udf test prints them after a run.
func (op *Operator) Timers(d abi.TimeDomain) []watermark.Timer { return op.timers.Timers(d) }

func (op *Operator) Finish(ctx context.Context) error {
	if err := op.sides.Finish(ctx); err != nil {
		return err
	}
	return op.next.Finish(ctx)
}

func (op *Operator) Close(ctx context.Context) error {
	errs := []error{op.call.Guest.Close(ctx)}
	if op.onTimer != nil {
		errs = append(errs, op.onTimer.Guest.Close(ctx))
	}
	errs = append(errs, op.keyed.Close(), op.next.Close(ctx), op.sides.Close(ctx))
	return errors.Join(errs...)
}
