package runtime

import (
	"context"
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
)

// groupCall builds a grouped frame (abi/group.go) and runs a grouped function
// (aggregate, reduce, window_process, process, on_timer, join, co_group) over
// it: one call for every group of a batch. Entries alias guest memory and are
// valid until the next call.
type groupCall struct {
	module   string
	function string
	fn       int
	pool     caller
	// env serves the state and timer imports of keyed functions (process,
	// on_timer, window_process); nil for the others.
	env host.Env

	frame   []byte
	groups  uint32
	records uint32
	reader  abi.OutputReader
	entry   abi.Entry
}

// begin starts a frame.
func (g *groupCall) begin(op abi.Op, watermark, processingTime int64) {
	g.frame = abi.AppendFrameHead(g.frame[:0], abi.FrameHead{Op: op, Watermark: watermark, ProcessingTime: processingTime})
	g.groups, g.records = 0, 0
}

// add appends a group with its records (the left side of a two-sided group)
// and returns the group's index.
func (g *groupCall) add(h *abi.GroupHead, recs []abi.Record) uint32 {
	g.frame = abi.AppendGroupHead(g.frame, h, uint32(len(recs)))
	for i := range recs {
		g.frame = abi.AppendRecord(g.frame, &recs[i])
	}
	g.records += uint32(len(recs))
	g.groups++
	return g.groups - 1
}

// run calls the function and passes each output entry to each, in order.
// Entry indexes name groups, or records when byRecord (process functions).
// A guest's whole-frame error or a malformed frame is a bad_output
// *host.CallError.
func (g *groupCall) run(ctx context.Context, byRecord bool, each func(e *abi.Entry) error) error {
	abi.SetGroupCount(g.frame, g.groups)
	out, err := callKeyed(ctx, g.pool, g.fn, g.frame, g.env)
	if err != nil {
		return err
	}
	limit := g.groups
	if byRecord {
		limit = g.records
	}
	if err := g.reader.Reset(out, limit); err != nil {
		return g.badOutput(err)
	}
	for g.reader.Next(&g.entry) {
		if g.entry.Tag == abi.TagError && g.entry.Index == abi.AllRecords {
			return g.badOutput(fmt.Errorf("frame failed: %s", g.entry.Message))
		}
		if err := each(&g.entry); err != nil {
			return err
		}
	}
	if err := g.reader.Err(); err != nil {
		return g.badOutput(err)
	}
	return nil
}

func (g *groupCall) badOutput(err error) error {
	return &host.CallError{Module: g.module, Function: g.function, Kind: host.KindBadOutput, Err: err}
}
