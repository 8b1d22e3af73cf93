package udfdev

import (
	"context"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
)

// sideSink prints the records a function writes to one side output, each
// naming the output: {"side_output": tag, "key", "value", "timestamp",
// "headers"}. The operator passes a call's side records on after its main
// output, so they follow the outputs of the batch that wrote them.
type sideSink struct {
	w   *lineWriter
	tag string
}

func (s *sideSink) Process(_ context.Context, recs []abi.Record) error {
	for i := range recs {
		line := recordLine(0, &recs[i])
		line.Input, line.SideOutput = nil, &s.tag
		if err := s.w.write(line); err != nil {
			return err
		}
	}
	return nil
}

func (s *sideSink) Advance(context.Context, int64) error { return nil }
func (s *sideSink) Tick(context.Context, int64) error    { return nil }
func (s *sideSink) Finish(context.Context) error         { return nil }
func (s *sideSink) Close(context.Context) error          { return nil }

// sideOutputs are the side outputs the options declare, each printed by a
// sideSink; nil without.
func (r *run) sideOutputs() *operator.SideOutputs {
	stages := make([]operator.Stage, len(r.opt.SideOutputs))
	for i, tag := range r.opt.SideOutputs {
		stages[i] = &sideSink{w: r.w, tag: tag}
	}
	return operator.NewSideOutputs(r.opt.Function, r.opt.BatchSize, r.opt.SideOutputs, stages)
}
