package operator

import (
	"context"
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
)

// RecordCall runs a record function (map, filter, flat_map, key,
// timestamp, watermark) over an input frame of records and reads its
// answer the one way, as GroupCall does for grouped functions: a whole-frame
// error entry, a malformed answer or an entry out of order is a bad_output
// *host.CallError; every other entry reaches the caller with Answer's
// verdict. Entries alias guest memory and are valid until the next call.
type RecordCall struct {
	Module   string
	Function string
	Fn       int
	Guest    Caller

	frame  []byte
	out    []byte
	reader abi.OutputReader
	entry  abi.Entry
	answer Answer
}

// Run calls the function over recs and passes each entry to each, in order.
func (c *RecordCall) Run(ctx context.Context, recs []abi.Record, each func(e *abi.Entry, first bool, v Verdict) error) error {
	c.frame = abi.AppendFrame(c.frame[:0], recs)
	out, err := c.Guest.Call(ctx, c.Fn, c.frame)
	if err != nil {
		return err
	}
	c.out = out
	if err := c.reader.Reset(out, uint32(len(recs))); err != nil {
		return c.BadOutput(err)
	}
	c.answer.Reset("input")
	for c.reader.Next(&c.entry) {
		e := &c.entry
		if e.Tag == abi.TagError && e.Index == abi.AllRecords {
			return c.BadOutput(fmt.Errorf("frame failed: %s", e.Message))
		}
		first, v, err := c.answer.Next(e)
		if err != nil {
			return c.BadOutput(err)
		}
		if err := each(e, first, v); err != nil {
			return err
		}
	}
	if err := c.reader.Err(); err != nil {
		return c.BadOutput(err)
	}
	return nil
}

// ReportedError is the message of the last answer's error entry for input
// i. Errors are rare, so it decodes the answer again rather than keeping
// messages around.
func (c *RecordCall) ReportedError(i int) string {
	var r abi.OutputReader
	var e abi.Entry
	if r.Reset(c.out, uint32(i+1)) != nil {
		return "error"
	}
	for r.Next(&e) {
		if e.Tag == abi.TagError && int(e.Index) == i {
			return string(e.Message)
		}
	}
	return "error"
}

// BadOutput is the call's failure for an answer that breaks the ABI.
func (c *RecordCall) BadOutput(err error) error {
	return &host.CallError{Module: c.Module, Function: c.Function, Kind: host.KindBadOutput, Err: err}
}
