package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/exchange"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/watermark"
)

// ShutdownGrace bounds how long a cancelled task may take to stop.
const ShutdownGrace = 30 * time.Second

// fetchWait bounds how long a source task waits for input before looking
// at its context and its processing-time clock again.
const fetchWait = tickEvery

// Task is one subtask of a chain: a source or an exchange gate feeding the
// chain's stages. It runs in its own goroutine, which owns everything here.
type Task struct {
	name      string
	subtask   int
	batchSize int
	chain     operator.Stage
	source    connector.Source
	gate      *exchange.Gate
	writers   []*exchange.Writer
	// inputs tells a join which of its two inputs a batch comes from; nil
	// for a single-input task.
	inputs *operator.Inputs
	// dlq publishes dead letters; it is finished after the chain.
	dlq operator.Stage
	// log carries the job, vertex (the chain head) and subtask.
	log *slog.Logger
	// stats are the task's figures for metrics and backpressure.
	stats taskStats
	// time is the task's event and processing time (tasktime.go).
	time taskTime
	// blocked says why each gate channel is blocked, when the scripted
	// clock blocks channels besides alignment (scriptedtime.go).
	blocked []blockReason
	// cp is the task's side of checkpointing, nil when the job takes no
	// checkpoints (checkpoint_task.go).
	cp *taskCheckpoint
	// net is the task's part in a run spread over workers, nil in a run
	// on one (remote_build.go).
	net *taskNet
}

// run processes input until its end (then finishes the chain) or a failure.
// A panic in the task becomes its error instead of crashing the process.
func (t *Task) run(ctx context.Context) (err error) {
	t.stats.begin()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
		if t.net != nil {
			t.net.ok, t.net.runCtx = err == nil, ctx
		}
		if cerr := t.close(); err == nil {
			err = cerr
		}
		t.stats.end()
		if err != nil && ctx.Err() == nil && !errors.Is(err, errStopped) {
			t.log.Error("task failed", "error", err)
		}
	}()
	if t.net != nil && t.net.remote != nil {
		return t.net.remote.wait(ctx)
	}
	if err = t.replayInFlight(ctx); err != nil {
		return err
	}
	if t.source != nil {
		err = t.runSource(ctx)
	} else {
		err = t.runGate(ctx)
	}
	if err != nil {
		return err
	}
	if err := t.chain.Finish(ctx); err != nil {
		return err
	}
	if t.dlq != nil {
		if err := t.dlq.Finish(ctx); err != nil {
			return err
		}
	}
	if t.cp != nil {
		return t.cp.finishInput(ctx, t)
	}
	return nil
}

func (t *Task) runSource(ctx context.Context) error {
	var batch abi.Batch
	if err := t.startScripted(ctx); err != nil {
		return err
	}
	for {
		if t.cp != nil {
			if err := t.cp.poll(ctx, t); err != nil {
				return err
			}
		}
		batch.Reset()
		start := MonoNanos()
		err := t.source.Fetch(ctx, &batch, t.batchSize, fetchWait)
		t.stats.fetched(start, batch.Len() >= t.batchSize)
		if batch.Len() > 0 {
			if perr := t.processSource(ctx, &batch); perr != nil {
				return perr
			}
		}
		if errors.Is(err, io.EOF) {
			if err := t.drainOutput(ctx); err != nil {
				return err
			}
			return t.chain.Advance(ctx, watermark.MaxWatermark)
		}
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := t.sourceTick(ctx); err != nil {
			return err
		}
	}
}

// drainOutput waits, once a source's input has ended, until each of its
// writers has every buffer back (its consumers took all it sent), taking
// checkpoint triggers meanwhile, whose barriers overtake that output. The
// channels' ends and the final watermark need buffers too: without the
// wait the task would wait for them inside its chain's Finish, taking no
// checkpoint, and its consumers would see its end, which an unaligned
// checkpoint waits for, only after all of its output.
func (t *Task) drainOutput(ctx context.Context) error {
	var ctl chan control
	if t.cp != nil {
		ctl = t.cp.ctl
	}
	tick := time.NewTicker(fetchWait)
	defer tick.Stop()
	for _, w := range t.writers {
		for w.Flush(); !w.Drained(); w.Flush() {
			select {
			case <-w.Freed():
			case m := <-ctl:
				if err := t.cp.handle(ctx, t, m); err != nil {
					return err
				}
			case <-tick.C:
				if err := t.sourceTick(ctx); err != nil {
					return err
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

func (t *Task) runGate(ctx context.Context) error {
	var recs []abi.Record
	stop := t.startTicker()
	defer stop()
	for {
		if err := t.gateTick(ctx); err != nil {
			return err
		}
		if t.cp != nil {
			if err := t.cp.poll(ctx, t); err != nil {
				return err
			}
		}
		buf, err := t.gate.Next(ctx)
		if errors.Is(err, io.EOF) {
			return t.endGate(ctx)
		}
		if errors.Is(err, exchange.ErrWoken) {
			continue
		}
		if err != nil {
			return err
		}
		if ev := buf.Event(); ev != nil {
			channel := buf.Channel()
			buf.Recycle()
			if err := t.event(ctx, channel, ev); err != nil {
				return err
			}
			continue
		}
		t.stats.bytesIn.Add(int64(len(buf.Frame())))
		if t.cp != nil && t.cp.rec != nil {
			t.cp.record(buf.Channel(), buf.Frame())
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
		if t.inputs != nil {
			t.inputs.From(buf.Channel())
		}
		err = t.chain.Process(ctx, recs[:n])
		buf.Recycle()
		if err != nil {
			return err
		}
	}
}

// event handles an input channel's event: a scripted processing time
// (clockEvent), a watermark or an idleness change
// for event time (gateEvent), a checkpoint barrier for alignment
// (taskCheckpoint.gateEvent), a channel's end for both. An event it does not
// know, or a barrier in a task that takes no checkpoints, fails the task.
func (t *Task) event(ctx context.Context, channel int, ev exchange.Event) error {
	switch e := ev.(type) {
	case exchange.Watermark, exchange.Idle:
		return t.gateEvent(ctx, channel, ev)
	case exchange.ProcessingTime:
		return t.clockEvent(ctx, channel, e.Time, false)
	case exchange.Barrier:
		if t.cp == nil {
			return fmt.Errorf("input channel %d: checkpoint barrier %d, but the job takes no checkpoints", channel, e.ID)
		}
		return t.cp.gateEvent(ctx, t, channel, ev)
	case exchange.EndOfPartition:
		if err := t.gateEvent(ctx, channel, ev); err != nil {
			return err
		}
		if err := t.clockEvent(ctx, channel, 0, true); err != nil {
			return err
		}
		if t.cp == nil {
			return nil
		}
		return t.cp.gateEvent(ctx, t, channel, ev)
	default:
		return unhandledEvent("task", channel, ev)
	}
}

// unhandledEvent is the error of a consumer (what) that got an event kind
// it does not handle on input channel channel.
func unhandledEvent(what string, channel int, ev exchange.Event) error {
	return fmt.Errorf("%s: input channel %d: unhandled exchange event %T (%v)", what, channel, ev, ev)
}

// close releases the chain, the source and the dead-letter sink.
func (t *Task) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	var errs []error
	if t.cp != nil {
		t.cp.abandon()
	}
	if t.chain != nil {
		errs = append(errs, t.chain.Close(ctx))
	}
	if t.source != nil {
		errs = append(errs, t.source.Close())
	}
	if t.dlq != nil {
		errs = append(errs, t.dlq.Close(ctx))
	}
	if t.net != nil {
		errs = append(errs, t.net.close())
	}
	return errors.Join(errs...)
}

// runTasks runs every task in its own goroutine; the first failure cancels
// the others. It returns that failure. A task that stopped after a
// savepoint that stops the job has not failed.
func runTasks(ctx context.Context, cancel context.CancelFunc, tasks []*Task) error {
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for _, t := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := t.run(ctx); err != nil && ctx.Err() == nil && !errors.Is(err, errStopped) {
				once.Do(func() { firstErr = &TaskFailure{Task: t.name, Subtask: t.subtask, Err: err}; cancel() })
			}
		}()
	}
	wg.Wait()
	return firstErr
}
