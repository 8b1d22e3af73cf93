package record

import (
	"context"
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/watermark"
)

// punctuator runs a watermark function over batches of a source's records:
// the function answers TagWatermark entries, each emitted after the record it
// names, and TagError for records that failed. Records pass on unchanged,
// except failed ones, which go through the error policy.
type punctuator struct {
	module    string
	function  string
	fn        int
	pool      operator.Caller
	batchSize int
	policy    *operator.ErrorPolicy

	frame  []byte
	reader abi.OutputReader
	entry  abi.Entry
	marks  []punctuation
	// start is where the current input's marks begin in marks.
	start  int
	answer operator.Answer
	// failed holds the message of each input the function failed, empty
	// for the others.
	failed []string
	out    []abi.Record
}

// NewPunctuator runs watermark function fn (its index in the module's
// self-description) of module on guest for a source's punctuated
// watermarks, in calls of at most batchSize records.
func NewPunctuator(module, function string, fn int, guest operator.Caller, batchSize int, policy *operator.ErrorPolicy) watermark.Punctuator {
	return &punctuator{module: module, function: function, fn: fn, pool: guest, batchSize: batchSize, policy: policy}
}

// punctuation is a watermark emitted after the input record index.
type punctuation struct {
	index int
	wm    int64
}

// Punctuate runs the function over recs in batches.
func (p *punctuator) Punctuate(ctx context.Context, g *watermark.Generator, recs []abi.Record) error {
	for len(recs) > 0 {
		n := min(len(recs), p.batchSize)
		if err := p.chunk(ctx, g, recs[:n]); err != nil {
			return err
		}
		recs = recs[n:]
	}
	return nil
}

// chunk runs the function over at most a batch of records, finding the
// poison ones when the call fails as a whole.
func (p *punctuator) chunk(ctx context.Context, g *watermark.Generator, recs []abi.Record) error {
	return p.policy.Isolate(0, len(recs),
		func(lo, hi int) error {
			if err := p.call(ctx, recs[lo:hi]); err != nil {
				return err
			}
			return p.pass(ctx, g, recs[lo:hi])
		},
		func(i int, err error) error { return p.policy.RecordFailed(ctx, &recs[i], err) })
}

// call runs the function and collects its punctuations and failures.
func (p *punctuator) call(ctx context.Context, recs []abi.Record) error {
	p.frame = abi.AppendFrame(p.frame[:0], recs)
	out, err := p.pool.Call(ctx, p.fn, p.frame)
	if err != nil {
		return err
	}
	if err := p.reader.Reset(out, uint32(len(recs))); err != nil {
		return p.badOutput(err)
	}
	p.marks = p.marks[:0]
	if cap(p.failed) < len(recs) {
		p.failed = make([]string, len(recs))
	}
	p.failed = p.failed[:len(recs)]
	clear(p.failed)
	p.answer.Reset("input")
	for p.reader.Next(&p.entry) {
		e := &p.entry
		if e.Tag == abi.TagError && e.Index == abi.AllRecords {
			return p.badOutput(fmt.Errorf("frame failed: %s", e.Message))
		}
		first, verdict, err := p.answer.Next(e)
		if err != nil {
			return p.badOutput(err)
		}
		if first {
			p.start = len(p.marks)
		}
		if e.Tag != abi.TagError && e.Tag != abi.TagWatermark {
			return p.badOutput(fmt.Errorf("watermark function wrote a %s entry", operator.TagName(e.Tag)))
		}
		switch verdict {
		case operator.Fail:
			// The record fails: the watermarks it answered are discarded.
			p.marks = p.marks[:p.start]
			p.failed[e.Index] = "error: " + string(e.Message)
		case operator.Emit:
			p.marks = append(p.marks, punctuation{index: int(e.Index), wm: e.Timestamp})
		}
	}
	if err := p.reader.Err(); err != nil {
		return p.badOutput(err)
	}
	return nil
}

// pass hands the records on, stopping after each punctuated record to emit
// its watermark.
func (p *punctuator) pass(ctx context.Context, g *watermark.Generator, recs []abi.Record) error {
	p.out = p.out[:0]
	next := 0
	flush := func() error {
		if len(p.out) == 0 {
			return nil
		}
		err := g.Pass(ctx, p.out)
		p.out = p.out[:0]
		return err
	}
	for i := range recs {
		if p.failed[i] != "" {
			if err := p.policy.RecordFailed(ctx, &recs[i], fmt.Errorf("udf[%s] function[%s]: %s", p.module, p.function, p.failed[i])); err != nil {
				return err
			}
		} else {
			p.out = append(p.out, recs[i])
		}
		for next < len(p.marks) && p.marks[next].index == i {
			if err := flush(); err != nil {
				return err
			}
			if err := g.Punctuation(ctx, p.marks[next].wm); err != nil {
				return err
			}
			next++
		}
	}
	return flush()
}

func (p *punctuator) badOutput(err error) error {
	return &host.CallError{Module: p.module, Function: p.function, Kind: host.KindBadOutput, Err: err}
}

func (p *punctuator) Close(ctx context.Context) error { return p.pool.Close(ctx) }
