package operator

import (
	"context"
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
)

// GroupCall builds a grouped frame (abi/group.go) and runs a grouped function
// (aggregate, reduce, window_process, process, on_timer, join, co_group) over
// it: one call for every group of a batch. Entries alias guest memory and are
// valid until the next call.
type GroupCall struct {
	Module   string
	Function string
	Fn       int
	Guest    Caller
	// Env serves the state and timer imports of keyed functions (process,
	// on_timer, window_process); nil for the others.
	Env host.Env

	Frame   []byte
	groups  uint32
	Records uint32
	reader  abi.OutputReader
	entry   abi.Entry
}

// Begin starts a frame.
func (g *GroupCall) Begin(op abi.Op, watermark, processingTime int64) {
	g.Frame = abi.AppendFrameHead(g.Frame[:0], abi.FrameHead{Op: op, Watermark: watermark, ProcessingTime: processingTime})
	g.groups, g.Records = 0, 0
}

// Add appends a group with its records (the left side of a two-sided group)
// and returns the group's index.
func (g *GroupCall) Add(h *abi.GroupHead, recs []abi.Record) uint32 {
	g.Frame = abi.AppendGroupHead(g.Frame, h, uint32(len(recs)))
	for i := range recs {
		g.Frame = abi.AppendRecord(g.Frame, &recs[i])
	}
	g.Records += uint32(len(recs))
	g.groups++
	return g.groups - 1
}

// Run calls the function and passes each output entry to each, in order.
// Entry indexes name groups, or records when byRecord (process functions).
// A guest's whole-frame error or a malformed frame is a bad_output
// *host.CallError.
func (g *GroupCall) Run(ctx context.Context, byRecord bool, each func(e *abi.Entry) error) error {
	abi.SetGroupCount(g.Frame, g.groups)
	out, err := CallKeyed(ctx, g.Guest, g.Fn, g.Frame, g.Env)
	if err != nil {
		return err
	}
	limit := g.groups
	if byRecord {
		limit = g.Records
	}
	if err := g.reader.Reset(out, limit); err != nil {
		return g.BadOutput(err)
	}
	for g.reader.Next(&g.entry) {
		if g.entry.Tag == abi.TagError && g.entry.Index == abi.AllRecords {
			return g.BadOutput(fmt.Errorf("frame failed: %s", g.entry.Message))
		}
		if err := each(&g.entry); err != nil {
			return err
		}
	}
	if err := g.reader.Err(); err != nil {
		return g.BadOutput(err)
	}
	return nil
}

func (g *GroupCall) BadOutput(err error) error {
	return &host.CallError{Module: g.Module, Function: g.Function, Kind: host.KindBadOutput, Err: err}
}

// BeginEncoded appends the head of a group whose count records the caller
// appends to g.frame already encoded in the input frame layout.
func (g *GroupCall) BeginEncoded(h *abi.GroupHead, count uint32) {
	g.Frame = abi.AppendGroupHead(g.Frame, h, count)
	g.Records += count
	g.groups++
}

// TagName names an entry tag in error messages.
func TagName(t abi.Tag) string {
	switch t {
	case abi.TagRecord:
		return "record"
	case abi.TagKeep:
		return "keep"
	case abi.TagKey:
		return "key"
	case abi.TagTimestamp:
		return "timestamp"
	case abi.TagError:
		return "error"
	case abi.TagAccumulator:
		return "accumulator"
	case abi.TagWatermark:
		return "watermark"
	case abi.TagOutput:
		return "side output"
	case abi.TagTrigger:
		return "trigger"
	case abi.TagTimer:
		return "timer"
	}
	return fmt.Sprintf("tag %d", t)
}
