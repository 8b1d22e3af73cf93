package runtime

import (
	"context"
	"errors"
	"sync/atomic"

	"wasmstream.io/platform/abi"
)

// stage is one step of a task's operator chain. Chained operators call each
// other directly: a stage processes a batch and passes its output to the next
// stage before returning, so records handed to process are only valid until
// it returns and a stage copies what it keeps.
type stage interface {
	// process handles a batch of records.
	process(ctx context.Context, recs []abi.Record) error
	// advance tells the stage that event time has reached wm (a watermark):
	// it fires what is due (timers, windows) and then advances the stages
	// after it. Watermarks never go backwards.
	advance(ctx context.Context, wm int64) error
	// tick tells the stage that processing time is now (ms since the epoch): it
	// fires processing-time timers and windows that are due.
	tick(ctx context.Context, now int64) error
	// finish is called once at the end of input, after the last process; it
	// flushes and then finishes the stages after it.
	finish(ctx context.Context) error
	// close releases resources; it is called once, also after a failure.
	close(ctx context.Context) error
}

// fanout passes every batch to several stages: an operator with more than one
// consumer.
type fanout []stage

func (f fanout) process(ctx context.Context, recs []abi.Record) error {
	for _, s := range f {
		if err := s.process(ctx, recs); err != nil {
			return err
		}
	}
	return nil
}

func (f fanout) advance(ctx context.Context, wm int64) error {
	for _, s := range f {
		if err := s.advance(ctx, wm); err != nil {
			return err
		}
	}
	return nil
}

func (f fanout) tick(ctx context.Context, now int64) error {
	for _, s := range f {
		if err := s.tick(ctx, now); err != nil {
			return err
		}
	}
	return nil
}

func (f fanout) finish(ctx context.Context) error {
	for _, s := range f {
		if err := s.finish(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (f fanout) close(ctx context.Context) error {
	var errs []error
	for _, s := range f {
		errs = append(errs, s.close(ctx))
	}
	return errors.Join(errs...)
}

// counters are one subtask's figures for one vertex. The task goroutine
// writes them; the API reads them.
type counters struct {
	in, out      atomic.Int64
	udfErrors    atomic.Int64
	skipped      atomic.Int64
	deadLettered atomic.Int64
	// busy times the vertex's stage (see inMeter).
	busy busyClock
	// late counts records too late for every window (window operators).
	late atomic.Int64
	// watermark is the last watermark the vertex passed on, or
	// abi.NoWatermark.
	watermark atomic.Int64
}

// newCounters makes a subtask's counters, without a watermark yet.
func newCounters() *counters {
	c := &counters{}
	c.watermark.Store(abi.NoWatermark)
	return c
}

// meter counts the records passing one point of a chain and, when wm is set,
// notes the watermarks passing it.
type meter struct {
	count *atomic.Int64
	wm    *atomic.Int64
	next  stage
}

func (m *meter) process(ctx context.Context, recs []abi.Record) error {
	m.count.Add(int64(len(recs)))
	return m.next.process(ctx, recs)
}

func (m *meter) advance(ctx context.Context, wm int64) error {
	if m.wm != nil {
		m.wm.Store(wm)
	}
	return m.next.advance(ctx, wm)
}

func (m *meter) tick(ctx context.Context, now int64) error { return m.next.tick(ctx, now) }
func (m *meter) finish(ctx context.Context) error          { return m.next.finish(ctx) }
func (m *meter) close(ctx context.Context) error           { return m.next.close(ctx) }
