package operator

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"wasmstream.io/platform/abi"
)

// SideOutputs are an operator's named side outputs (Flink's OutputTag): the
// names its spec declares, each with the stage that consumes it. A
// function's TagOutput entries are copied into one batch per output and
// passed on with the operator's results; a nil *SideOutputs has none, and
// every entry naming one fails its input.
//
// Marks follow the two levels at which an answer is discarded: a whole call
// (a trap, a malformed answer) and one input of it (an error entry), so a
// failed input's side records vanish with its results.
type SideOutputs struct {
	// vertex is the operator's id, for errors.
	vertex string
	names  []string
	outs   []sideOutput
	max    int
}

type sideOutput struct {
	next        Stage
	batch       abi.Batch
	call, input int
}

// NewSideOutputs makes the side outputs names of operator vertex, consumed
// by stages (one each), that pass their records on in batches of up to
// max. Nil without names.
func NewSideOutputs(vertex string, max int, names []string, stages []Stage) *SideOutputs {
	if len(names) == 0 {
		return nil
	}
	s := &SideOutputs{vertex: vertex, names: names, outs: make([]sideOutput, len(names)), max: max}
	for i := range stages {
		s.outs[i].next = stages[i]
	}
	return s
}

// Find is the index of the output named name, or -1. The search is linear:
// an operator declares a few outputs.
func (s *SideOutputs) Find(name []byte) int {
	if s == nil {
		return -1
	}
	for i, n := range s.names {
		if n == string(name) {
			return i
		}
	}
	return -1
}

// Undeclared is the error of an entry naming an output the operator does
// not declare; it fails the input the entry answers.
func (s *SideOutputs) Undeclared(name []byte) error {
	if s == nil {
		return fmt.Errorf("side output %q is not declared: the operator has no side_outputs", name)
	}
	return fmt.Errorf("side output %q is not declared: operator %q's side_outputs are %s", name, s.vertex, strings.Join(s.names, ", "))
}

// Emit copies a record into output i.
func (s *SideOutputs) Emit(i int, key, value []byte, ts int64, headers []abi.Header) {
	s.outs[i].batch.AppendParts(key, value, ts, headers)
}

// MarkCall notes where a call's side records begin.
func (s *SideOutputs) MarkCall() {
	if s == nil {
		return
	}
	for i := range s.outs {
		o := &s.outs[i]
		o.call, o.input = o.batch.Len(), o.batch.Len()
	}
}

// MarkInput notes where an input's side records begin.
func (s *SideOutputs) MarkInput() {
	if s == nil {
		return
	}
	for i := range s.outs {
		s.outs[i].input = s.outs[i].batch.Len()
	}
}

// DropInput discards the side records of the input marked last.
func (s *SideOutputs) DropInput() {
	if s == nil {
		return
	}
	for i := range s.outs {
		s.outs[i].batch.Truncate(s.outs[i].input)
	}
}

// DropCall discards the side records of the call marked last.
func (s *SideOutputs) DropCall() {
	if s == nil {
		return
	}
	for i := range s.outs {
		s.outs[i].batch.Truncate(s.outs[i].call)
	}
}

// Full reports whether an output holds a batch of records.
func (s *SideOutputs) Full() bool {
	if s == nil {
		return false
	}
	for i := range s.outs {
		if s.outs[i].batch.Len() >= s.max {
			return true
		}
	}
	return false
}

// Flush passes the collected side records on.
func (s *SideOutputs) Flush(ctx context.Context) error {
	if s == nil {
		return nil
	}
	for i := range s.outs {
		o := &s.outs[i]
		if o.batch.Len() == 0 {
			continue
		}
		err := o.next.Process(ctx, o.batch.Records)
		o.batch.Reset()
		if err != nil {
			return fmt.Errorf("side output %q: %w", s.names[i], err)
		}
	}
	return nil
}

// Advance passes a watermark on to every output's consumer.
func (s *SideOutputs) Advance(ctx context.Context, wm int64) error {
	return s.each(func(st Stage) error { return st.Advance(ctx, wm) })
}

// Tick passes the processing time on to every output's consumer.
func (s *SideOutputs) Tick(ctx context.Context, now int64) error {
	return s.each(func(st Stage) error { return st.Tick(ctx, now) })
}

// Finish flushes and finishes every output's consumer.
func (s *SideOutputs) Finish(ctx context.Context) error {
	if err := s.Flush(ctx); err != nil {
		return err
	}
	return s.each(func(st Stage) error { return st.Finish(ctx) })
}

// Close closes every output's consumer.
func (s *SideOutputs) Close(ctx context.Context) error {
	if s == nil {
		return nil
	}
	var errs []error
	for i := range s.outs {
		errs = append(errs, s.outs[i].next.Close(ctx))
	}
	return errors.Join(errs...)
}

func (s *SideOutputs) each(f func(Stage) error) error {
	if s == nil {
		return nil
	}
	for i := range s.outs {
		if err := f(s.outs[i].next); err != nil {
			return err
		}
	}
	return nil
}
