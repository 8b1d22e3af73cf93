package record

import (
	"context"
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/watermark"
)

// punctuator runs a watermark function over batches of a source's records:
// the function answers TagWatermark entries, each emitted after the record it
// names, and TagError for records that failed. Records pass on unchanged,
// except failed ones, which go through the error policy.
type punctuator struct {
	call      operator.RecordCall
	batchSize int
	policy    *operator.ErrorPolicy

	marks []punctuation
	// start is where the current input's marks begin in marks.
	start int
	// failed holds the message of each input the function failed, empty
	// for the others.
	failed []string
	out    []abi.Record
}

// NewPunctuator runs watermark function fn (its index in the module's
// self-description) of module on guest for a source's punctuated
// watermarks, in calls of at most batchSize records.
func NewPunctuator(module, function string, fn int, guest operator.Caller, batchSize int, policy *operator.ErrorPolicy) watermark.Punctuator {
	return &punctuator{call: operator.RecordCall{Module: module, Function: function, Fn: fn, Guest: guest}, batchSize: batchSize, policy: policy}
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
			if err := p.run(ctx, recs[lo:hi]); err != nil {
				return err
			}
			return p.pass(ctx, g, recs[lo:hi])
		},
		func(i int, err error) error { return p.policy.RecordFailed(ctx, &recs[i], err) })
}

// run runs the function and collects its punctuations and failures.
func (p *punctuator) run(ctx context.Context, recs []abi.Record) error {
	p.marks = p.marks[:0]
	if cap(p.failed) < len(recs) {
		p.failed = make([]string, len(recs))
	}
	p.failed = p.failed[:len(recs)]
	clear(p.failed)
	return p.call.Run(ctx, recs, func(e *abi.Entry, first bool, verdict operator.Verdict) error {
		if first {
			p.start = len(p.marks)
		}
		if e.Tag != abi.TagError && e.Tag != abi.TagWatermark {
			return p.call.BadOutput(fmt.Errorf("watermark function wrote a %s entry", operator.TagName(e.Tag)))
		}
		switch verdict {
		case operator.Fail:
			// The record fails: the watermarks it answered are discarded.
			p.marks = p.marks[:p.start]
			p.failed[e.Index] = "error: " + string(e.Message)
		case operator.Emit:
			p.marks = append(p.marks, punctuation{index: int(e.Index), wm: e.Timestamp})
		}
		return nil
	})
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
			if err := p.policy.RecordFailed(ctx, &recs[i], fmt.Errorf("udf[%s] function[%s]: %s", p.call.Module, p.call.Function, p.failed[i])); err != nil {
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

func (p *punctuator) Close(ctx context.Context) error { return p.call.Guest.Close(ctx) }
