package connector

import (
	"context"
	"errors"
	"io"
	"time"

	"wasmstream.io/platform/abi"
)

// TestStep is one step of a test stream: a record, or (Watermark set) a
// watermark.
type TestStep struct {
	Record    abi.Record
	Watermark *int64
}

// TestStream is a source that plays a fixed script of records and
// watermarks, the same way on every run (Flink's TestStream): a job's test
// under exact event time. Subtask 0 plays the script; the others end at
// once. Its position is the number of steps played, so a restored job
// goes on after the last step its checkpoint saw.
type TestStream struct {
	steps []TestStep
	next  int
	// Advance passes a scripted watermark on, on the task's goroutine
	// between batches; the task sets it to its chain's Advance.
	Advance func(ctx context.Context, wm int64) error
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
	return s
}

// errNoAdvance is a test stream whose watermarks have nowhere to go.
var errNoAdvance = errors.New("connector: test stream: no Advance for its watermarks")

// Fetch appends the records up to the next watermark (at most max). A
// watermark step is passed on at the next call, once the records before
// it have gone through the chain.
func (s *TestStream) Fetch(ctx context.Context, b *abi.Batch, max int, _ time.Duration) error {
	for s.next < len(s.steps) {
		st := &s.steps[s.next]
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
