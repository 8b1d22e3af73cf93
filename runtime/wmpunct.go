package runtime

import (
	"context"
	"errors"
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
	// failed holds the message of each input the function failed, empty
	// for the others.
	failed []string
	out    []abi.Record
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

func (p *punctuator) chunk(ctx context.Context, g *watermark.Generator, recs []abi.Record) error {
	err := p.call(ctx, recs)
	if err == nil {
		return p.pass(ctx, g, recs)
	}
	var callErr *host.CallError
	if !errors.As(err, &callErr) {
		return err
	}
	if len(recs) == 1 {
		return p.policy.RecordFailed(ctx, &recs[0], err)
	}
	if p.policy.Mode == operator.OnErrorFail {
		return fmt.Errorf("operator[%s]: %w", p.policy.Vertex, err)
	}
	// Find the poison records one by one; the others are neither lost nor
	// duplicated.
	for i := range recs {
		if err := p.chunk(ctx, g, recs[i:i+1]); err != nil {
			return err
		}
	}
	return nil
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
	last := -1
	for p.reader.Next(&p.entry) {
		e := &p.entry
		if e.Tag == abi.TagError && e.Index == abi.AllRecords {
			return p.badOutput(fmt.Errorf("frame failed: %s", e.Message))
		}
		if int(e.Index) < last {
			return p.badOutput(fmt.Errorf("entry for input %d after input %d", e.Index, last))
		}
		last = int(e.Index)
		switch e.Tag {
		case abi.TagWatermark:
			p.marks = append(p.marks, punctuation{index: last, wm: e.Timestamp})
		case abi.TagError:
			p.failed[last] = "error: " + string(e.Message)
		default:
			return p.badOutput(fmt.Errorf("watermark function wrote a %s entry", operator.TagName(e.Tag)))
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
