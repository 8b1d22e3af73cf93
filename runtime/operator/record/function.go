package record

import (
	"context"
	"errors"
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
)

// wasmOp runs a record function (map, filter, flat_map, key, timestamp) of a
// module over batches. Outputs alias the input records and guest memory, so
// they are passed on before the next call into the module.
type wasmOp struct {
	kind      abi.Kind
	call      operator.RecordCall
	batchSize int
	policy    *operator.ErrorPolicy
	next      operator.Stage

	out     []abi.Record
	headers []abi.Header
	// tracer is next when it is an operator.Tracer; inputs are then the
	// inputs the records of out answer.
	tracer operator.Tracer
	inputs []*abi.Record
}

// NewFunction runs record function fn (its index in the module's
// self-description, a map, filter, flat_map, key or timestamp function) of
// module on guest, in calls of at most batchSize records, in front of next.
func NewFunction(kind abi.Kind, module, function string, fn int, guest operator.Caller, batchSize int, policy *operator.ErrorPolicy, next operator.Stage) operator.Stage {
	tracer, _ := next.(operator.Tracer)
	return &wasmOp{kind: kind, call: operator.RecordCall{Module: module, Function: function, Fn: fn, Guest: guest}, batchSize: batchSize, policy: policy, next: next, tracer: tracer}
}

func (o *wasmOp) Process(ctx context.Context, recs []abi.Record) error {
	for len(recs) > 0 {
		n := min(len(recs), o.batchSize)
		if err := o.processChunk(ctx, recs[:n]); err != nil {
			return err
		}
		recs = recs[n:]
	}
	return nil
}

// processChunk runs the function over at most a batch of records, finding
// the poison ones when the call fails as a whole (a trap, a deadline, a bad
// frame), so that the others are neither lost nor duplicated.
func (o *wasmOp) processChunk(ctx context.Context, recs []abi.Record) error {
	return o.policy.Isolate(0, len(recs),
		func(lo, hi int) error {
			if err := o.run(ctx, recs[lo:hi]); err != nil {
				return err
			}
			if o.tracer != nil {
				o.tracer.Answers(o.inputs)
			}
			return o.next.Process(ctx, o.out)
		},
		func(i int, err error) error { return o.policy.RecordFailed(ctx, &recs[i], err) })
}

// run runs the function over recs and decodes its output into o.out,
// applying the error policy to records the guest reports as failed.
func (o *wasmOp) run(ctx context.Context, recs []abi.Record) error {
	o.out = o.out[:0]
	o.headers = o.headers[:0]
	o.inputs = o.inputs[:0]
	var failed []int
	indexStart, indexEntries, distinct := 0, 0, 0
	onePerInput := o.kind != abi.KindFilter && o.kind != abi.KindFlatMap
	err := o.call.Run(ctx, recs, func(e *abi.Entry, first bool, verdict operator.Verdict) error {
		if first {
			indexStart, indexEntries = len(o.out), 0
			distinct++
		}
		if e.Tag != abi.TagError && !o.kind.Answers(e.Tag) {
			return o.call.BadOutput(fmt.Errorf("%s function wrote a %s entry", o.kind, operator.TagName(e.Tag)))
		}
		switch verdict {
		case operator.Fail:
			o.out = o.out[:indexStart]
			if o.tracer != nil {
				o.inputs = o.inputs[:indexStart]
			}
			failed = append(failed, int(e.Index))
		case operator.Emit:
			if indexEntries++; onePerInput && indexEntries > 1 {
				return o.call.BadOutput(fmt.Errorf("%s function wrote %d entries for input %d", o.kind, indexEntries, e.Index))
			}
			o.out = append(o.out, o.merge(&recs[e.Index], e))
			if o.tracer != nil {
				o.inputs = append(o.inputs, &recs[e.Index])
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if onePerInput && distinct != len(recs) {
		return o.call.BadOutput(fmt.Errorf("%s function answered %d of %d records", o.kind, distinct, len(recs)))
	}
	for _, i := range failed {
		if err := o.policy.RecordFailed(ctx, &recs[i], fmt.Errorf("udf[%s] function[%s]: %s", o.call.Module, o.call.Function, o.call.ReportedError(i))); err != nil {
			return err
		}
	}
	return nil
}

// merge builds the output record of an entry, keeping its headers in
// o.headers.
func (o *wasmOp) merge(in *abi.Record, e *abi.Entry) abi.Record {
	out := e.Apply(in)
	if e.Tag == abi.TagRecord && e.Flags&abi.HasHeaders != 0 {
		start := len(o.headers)
		o.headers = append(o.headers, e.Headers...)
		out.Headers = o.headers[start:len(o.headers):len(o.headers)]
	}
	return out
}

func (o *wasmOp) Advance(ctx context.Context, wm int64) error { return o.next.Advance(ctx, wm) }
func (o *wasmOp) Tick(ctx context.Context, now int64) error   { return o.next.Tick(ctx, now) }
func (o *wasmOp) Finish(ctx context.Context) error            { return o.next.Finish(ctx) }

func (o *wasmOp) Close(ctx context.Context) error {
	return errors.Join(o.call.Guest.Close(ctx), o.next.Close(ctx))
}
