package record

import (
	"context"
	"errors"
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
)

// wasmOp runs a record function (map, filter, flat_map, key, timestamp) of a
// module over batches. Outputs alias the input records and guest memory, so
// they are passed on before the next call into the module.
type wasmOp struct {
	kind      abi.Kind
	module    string
	function  string
	fn        int
	pool      operator.Caller
	batchSize int
	policy    *operator.ErrorPolicy
	next      operator.Stage

	frame   []byte
	reader  abi.OutputReader
	entry   abi.Entry
	answer  operator.Answer
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
	return &wasmOp{kind: kind, module: module, function: function, fn: fn, pool: guest, batchSize: batchSize, policy: policy, next: next, tracer: tracer}
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
			if err := o.call(ctx, recs[lo:hi]); err != nil {
				return err
			}
			if o.tracer != nil {
				o.tracer.Answers(o.inputs)
			}
			return o.next.Process(ctx, o.out)
		},
		func(i int, err error) error { return o.policy.RecordFailed(ctx, &recs[i], err) })
}

// call runs the function over recs and decodes its output into o.out,
// applying the error policy to records the guest reports as failed.
func (o *wasmOp) call(ctx context.Context, recs []abi.Record) error {
	o.frame = abi.AppendFrame(o.frame[:0], recs)
	outFrame, err := o.pool.Call(ctx, o.fn, o.frame)
	if err != nil {
		return err
	}
	if err := o.reader.Reset(outFrame, uint32(len(recs))); err != nil {
		return o.badOutput(err)
	}
	o.out = o.out[:0]
	o.headers = o.headers[:0]
	o.inputs = o.inputs[:0]
	var failed []int
	o.answer.Reset("input")
	indexStart, indexEntries, distinct := 0, 0, 0
	onePerInput := o.kind != abi.KindFilter && o.kind != abi.KindFlatMap
	for o.reader.Next(&o.entry) {
		e := &o.entry
		if e.Tag == abi.TagError && e.Index == abi.AllRecords {
			return o.badOutput(fmt.Errorf("frame failed: %s", e.Message))
		}
		first, verdict, err := o.answer.Next(e)
		if err != nil {
			return o.badOutput(err)
		}
		if first {
			indexStart, indexEntries = len(o.out), 0
			distinct++
		}
		if e.Tag != abi.TagError && !o.kind.Answers(e.Tag) {
			return o.badOutput(fmt.Errorf("%s function wrote a %s entry", o.kind, operator.TagName(e.Tag)))
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
				return o.badOutput(fmt.Errorf("%s function wrote %d entries for input %d", o.kind, indexEntries, e.Index))
			}
			o.out = append(o.out, o.merge(&recs[e.Index], e))
			if o.tracer != nil {
				o.inputs = append(o.inputs, &recs[e.Index])
			}
		}
	}
	if err := o.reader.Err(); err != nil {
		return o.badOutput(err)
	}
	if onePerInput && distinct != len(recs) {
		return o.badOutput(fmt.Errorf("%s function answered %d of %d records", o.kind, distinct, len(recs)))
	}
	for _, i := range failed {
		if err := o.policy.RecordFailed(ctx, &recs[i], fmt.Errorf("udf[%s] function[%s]: %s", o.module, o.function, o.reportedError(outFrame, i))); err != nil {
			return err
		}
	}
	return nil
}

// reportedError finds the message of the error entry for input i. Errors are
// rare, so it decodes the frame again rather than keeping messages around.
func (o *wasmOp) reportedError(frame []byte, i int) string {
	var r abi.OutputReader
	var e abi.Entry
	if r.Reset(frame, uint32(i+1)) != nil {
		return "error"
	}
	for r.Next(&e) {
		if e.Tag == abi.TagError && int(e.Index) == i {
			return string(e.Message)
		}
	}
	return "error"
}

func (o *wasmOp) badOutput(err error) error {
	return &host.CallError{Module: o.module, Function: o.function, Kind: host.KindBadOutput, Err: err}
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
	return errors.Join(o.pool.Close(ctx), o.next.Close(ctx))
}
