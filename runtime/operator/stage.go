package operator

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"wasmstream.io/platform/abi"
)

// Stage is one step of a task's operator chain. Chained operators call each
// other directly: a Stage processes a batch and passes its output to the next
// Stage before returning, so records handed to process are only valid until
// it returns and a Stage copies what it keeps.
type Stage interface {
	// Process handles a batch of records.
	Process(ctx context.Context, recs []abi.Record) error
	// Advance tells the stage that event time has reached wm (a watermark):
	// it fires what is due (timers, windows) and then advances the stages
	// after it. Watermarks never go backwards.
	Advance(ctx context.Context, wm int64) error
	// Tick tells the stage that processing time is now (ms since the epoch): it
	// fires processing-time timers and windows that are due.
	Tick(ctx context.Context, now int64) error
	// Finish is called once at the end of input, after the last process; it
	// flushes and then finishes the stages after it.
	Finish(ctx context.Context) error
	// Close releases resources; it is called once, also after a failure.
	Close(ctx context.Context) error
}

// Fanout passes every batch to several stages: an operator with more than one
// consumer.
type Fanout []Stage

func (f Fanout) Process(ctx context.Context, recs []abi.Record) error {
	for _, s := range f {
		if err := s.Process(ctx, recs); err != nil {
			return err
		}
	}
	return nil
}

func (f Fanout) Advance(ctx context.Context, wm int64) error {
	for _, s := range f {
		if err := s.Advance(ctx, wm); err != nil {
			return err
		}
	}
	return nil
}

func (f Fanout) Tick(ctx context.Context, now int64) error {
	for _, s := range f {
		if err := s.Tick(ctx, now); err != nil {
			return err
		}
	}
	return nil
}

func (f Fanout) Finish(ctx context.Context) error {
	for _, s := range f {
		if err := s.Finish(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (f Fanout) Close(ctx context.Context) error {
	var errs []error
	for _, s := range f {
		errs = append(errs, s.Close(ctx))
	}
	return errors.Join(errs...)
}

// Meter counts the records passing one point of a chain and, when wm is set,
// notes the watermarks passing it.
type Meter struct {
	Count     *atomic.Int64
	Watermark *atomic.Int64
	Next      Stage
}

func (m *Meter) Process(ctx context.Context, recs []abi.Record) error {
	m.Count.Add(int64(len(recs)))
	return m.Next.Process(ctx, recs)
}

func (m *Meter) Advance(ctx context.Context, wm int64) error {
	if m.Watermark != nil {
		m.Watermark.Store(wm)
	}
	return m.Next.Advance(ctx, wm)
}

func (m *Meter) Tick(ctx context.Context, now int64) error { return m.Next.Tick(ctx, now) }
func (m *Meter) Finish(ctx context.Context) error          { return m.Next.Finish(ctx) }
func (m *Meter) Close(ctx context.Context) error           { return m.Next.Close(ctx) }

// Discard counts and drops records: the `discard: true` sink, used by
// benchmarks and tests.
type Discard struct{}

func (Discard) Process(context.Context, []abi.Record) error { return nil }
func (Discard) Advance(context.Context, int64) error        { return nil }
func (Discard) Tick(context.Context, int64) error           { return nil }
func (Discard) Finish(context.Context) error                { return nil }
func (Discard) Close(context.Context) error                 { return nil }

// NowMillis is the processing time: milliseconds since the epoch.
func NowMillis() int64 { return time.Now().UnixMilli() }
