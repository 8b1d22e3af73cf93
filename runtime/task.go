package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/exchange"
)

// fetchWait bounds how long a source task waits for input before looking
// at its context again.
const fetchWait = 100 * time.Millisecond

// task is one subtask of a chain: a source or an exchange gate feeding the
// chain's stages. It runs in its own goroutine, which owns everything here.
type task struct {
	name      string
	subtask   int
	batchSize int
	chain     stage
	source    connector.Source
	gate      *exchange.Gate
	writers   []*exchange.Writer
	// dlq publishes dead letters; it is finished after the chain.
	dlq stage
}

// run processes input until its end (then finishes the chain) or a failure.
// A panic in the task becomes its error instead of crashing the process.
func (t *task) run(ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
		if cerr := t.close(); err == nil {
			err = cerr
		}
	}()
	if t.source != nil {
		err = t.runSource(ctx)
	} else {
		err = t.runGate(ctx)
	}
	if err != nil {
		return err
	}
	if err := t.chain.finish(ctx); err != nil {
		return err
	}
	if t.dlq != nil {
		return t.dlq.finish(ctx)
	}
	return nil
}

func (t *task) runSource(ctx context.Context) error {
	var batch abi.Batch
	for {
		batch.Reset()
		err := t.source.Fetch(ctx, &batch, t.batchSize, fetchWait)
		if batch.Len() > 0 {
			if perr := t.chain.process(ctx, batch.Records); perr != nil {
				return perr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

func (t *task) runGate(ctx context.Context) error {
	var recs []abi.Record
	for {
		buf, err := t.gate.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if buf.Event() != nil {
			buf.Recycle()
			continue
		}
		// recs keeps its length between buffers so that each record's
		// header slice is reused.
		n := 0
		for {
			if n == len(recs) {
				recs = append(recs, abi.Record{})
			}
			if !buf.Next(&recs[n]) {
				break
			}
			n++
		}
		err = t.chain.process(ctx, recs[:n])
		buf.Recycle()
		if err != nil {
			return err
		}
	}
}

// close releases the chain, the source and the dead-letter sink.
func (t *task) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	var errs []error
	if t.chain != nil {
		errs = append(errs, t.chain.close(ctx))
	}
	if t.source != nil {
		errs = append(errs, t.source.Close())
	}
	if t.dlq != nil {
		errs = append(errs, t.dlq.close(ctx))
	}
	return errors.Join(errs...)
}

// backpressuredNanos is the time the task has spent waiting for output
// buffers.
func (t *task) backpressuredNanos() int64 {
	var n int64
	for _, w := range t.writers {
		n += w.Stats().BackpressuredNanos
	}
	return n
}
