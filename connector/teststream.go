package connector

import (
	"context"
	"errors"
	"io"
	"time"

	"wasmstream.io/platform/abi"
)

// TestStep is one step of a test stream: a record, or (Watermark set) a
// watermark, or (AdvanceProcessingTime above 0) a move of the job's
// processing time by that many milliseconds.
type TestStep struct {
	Record                abi.Record
	Watermark             *int64
	AdvanceProcessingTime int64
}

// TestStream is a source that plays a fixed script of records and
// watermarks, the same way on every run (Flink's TestStream): a job's test
// under exact event time. Subtask 0 plays the script; the others end at
// once. Its position is the number of steps played, so a restored job
// goes on after the last step its checkpoint saw.
type TestStream struct {
	steps []TestStep
	next  int
	// now is the processing time the steps played moved to, from 0.
	now int64
	// Advance passes a scripted watermark on, on the task's goroutine
	// between batches; the task sets it to its chain's Advance.
	Advance func(ctx context.Context, wm int64) error
	// SetProcessingTime passes the processing time a step advanced to on,
	// as Advance does a watermark; the task sets it in a job whose
	// processing time the script moves.
	SetProcessingTime func(ctx context.Context, now int64) error
}

// TestStreamPosition names a test stream's position in its checkpoints.
const TestStreamPosition = "step"

// NewTestStream plays steps in subtask 0 of a source, from step start.
func NewTestStream(steps []TestStep, subtask int, start map[string]uint64) *TestStream {
	s := &TestStream{steps: steps}
	if subtask != 0 {
		s.steps = nil
	}
	if n, ok := start[TestStreamPosition]; ok {
		s.next = int(min(n, uint64(len(s.steps))))
	}
	for _, st := range s.steps[:s.next] {
		s.now += st.AdvanceProcessingTime
	}
	return s
}

// errNoAdvance is a test stream whose watermarks have nowhere to go.
var errNoAdvance = errors.New("connector: test stream: no Advance for its watermarks")

// errNoClock is a test stream whose processing-time steps have nowhere to
// go.
var errNoClock = errors.New("connector: test stream: no SetProcessingTime for its processing-time steps")

// ProcessingTime is the processing time the steps played so far moved to,
// from 0: what a restored stream starts from.
func (s *TestStream) ProcessingTime() int64 { return s.now }

// Fetch appends the records up to the next watermark or processing-time
// step (at most max). Such a step is passed on at the next call, once the
// records before it have gone through the chain.
func (s *TestStream) Fetch(ctx context.Context, b *abi.Batch, max int, _ time.Duration) error {
	for s.next < len(s.steps) {
		st := &s.steps[s.next]
		if st.AdvanceProcessingTime > 0 {
			if b.Len() > 0 {
				return nil
			}
			if s.SetProcessingTime == nil {
				return errNoClock
			}
			s.next++
			s.now += st.AdvanceProcessingTime
			if err := s.SetProcessingTime(ctx, s.now); err != nil {
				return err
			}
			continue
		}
		if st.Watermark != nil {
			if b.Len() > 0 {
				return nil
			}
			if s.Advance == nil {
				return errNoAdvance
			}
			s.next++
			if err := s.Advance(ctx, *st.Watermark); err != nil {
				return err
			}
			continue
		}
		if b.Len() >= max {
			return nil
		}
		b.Append(&st.Record)
		s.next++
	}
	return io.EOF
}

// Positions is the number of steps played.
func (s *TestStream) Positions() map[string]uint64 {
	return map[string]uint64{TestStreamPosition: uint64(s.next)}
}

// Close releases nothing.
func (s *TestStream) Close() error { return nil }
