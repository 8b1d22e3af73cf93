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
}

// meter counts the records passing one point of a chain.
type meter struct {
	count *atomic.Int64
	next  stage
}

func (m *meter) process(ctx context.Context, recs []abi.Record) error {
	m.count.Add(int64(len(recs)))
	return m.next.process(ctx, recs)
}

func (m *meter) finish(ctx context.Context) error { return m.next.finish(ctx) }
func (m *meter) close(ctx context.Context) error  { return m.next.close(ctx) }
