package exec

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/runtime/exchange"
	"wasmstream.io/platform/runtime/operator"
)

// errStopped ends a task after a savepoint that stops the job completed: it
// leaves without finishing its input, and is no failure.
var errStopped = errors.New("stopped with a savepoint")

// controlLen bounds a task's queue of control messages. The coordinator
// sends one trigger at a time and a notification per checkpoint, so it
// never fills unless the task is stuck; then a message is dropped, which at
// worst times a checkpoint out (a later completion commits what an earlier
// one would have).
const controlLen = 64

// control is a message from the coordinator to a task: a trigger, or the
// end (completed or not) of a checkpoint.
type control struct {
	trigger   *checkpoint.Barrier
	id        int64
	completed bool
}

// participant is a stateful part of a task's chain that checkpoints capture:
// a source's positions, a keyed operator's state, a sink's staged output.
type participant interface {
	// snapshot captures the part's state at barrier id on the task
	// goroutine and returns the blobs to store, which may be written on
	// another goroutine while the task goes on.
	snapshot(ctx context.Context, id int64) ([]operator.Blob, error)
}

// committer is a participant that acts when a checkpoint completes: a
// transactional sink publishing what the checkpoint covers.
type committer interface {
	commit(ctx context.Context, id int64) error
	// staged says whether it holds output not yet committed.
	staged() bool
	// flush waits until its commits are acknowledged.
	flush(ctx context.Context) error
}

// taskCheckpoint is a task's side of checkpointing. The task goroutine owns
// it, except ctl (any goroutine sends) and triggers (read by the
// coordinator's goroutine through checkpointRun.Trigger).
type taskCheckpoint struct {
	run   *checkpointRun
	name  string
	ctl   chan control
	parts []participant
	sinks []committer
	// triggers: the task takes triggers directly (a source, or a task at
	// the end of its input waiting for its final commit).
	triggers atomic.Bool
	align    aligner
	// last is the newest checkpoint the task took.
	last int64
	// rec is the unaligned checkpoint taken and still recording in-flight
	// data, nil if none (checkpoint_inflight_task.go).
	rec *inFlightRecorder
	// restore is what the run restores, nil for nothing; the task replays
	// its in-flight data before anything else (checkpoint_inflight_restore.go).
	restore *RestoreSet
}

func newTaskCheckpoint(run *checkpointRun, name string, source bool) *taskCheckpoint {
	c := &taskCheckpoint{run: run, name: name, ctl: make(chan control, controlLen)}
	c.triggers.Store(source)
	return c
}

// send queues a message without blocking.
func (c *taskCheckpoint) send(m control) {
	select {
	case c.ctl <- m:
	default:
	}
}

// add registers a stateful part of the chain.
func (c *taskCheckpoint) add(p participant) {
	c.parts = append(c.parts, p)
	if s, ok := p.(committer); ok {
		c.sinks = append(c.sinks, s)
	}
}

// poll handles the control messages queued, without waiting. A source task
// calls it between fetches; a gate task between buffers.
func (c *taskCheckpoint) poll(ctx context.Context, t *Task) error {
	if err := c.run.j.fault(FaultProcess, c.name); err != nil {
		return err
	}
	for {
		select {
		case m := <-c.ctl:
			if err := c.handle(ctx, t, m); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// handle acts on one control message in a running task.
func (c *taskCheckpoint) handle(ctx context.Context, t *Task, m control) error {
	switch {
	case m.trigger != nil:
		if t.source == nil || m.trigger.ID <= c.last {
			return nil
		}
		if err := c.take(ctx, t, *m.trigger, 0, false); err != nil {
			return err
		}
		if m.trigger.Stop {
			return c.stopped(ctx, t, m.trigger.ID)
		}
	case m.completed:
		return c.commit(ctx, m.id)
	case c.rec != nil && m.id == c.rec.id:
		c.abandon()
	}
	return nil
}

// commit tells the transactional sinks that checkpoint id completed.
func (c *taskCheckpoint) commit(ctx context.Context, id int64) error {
	for _, s := range c.sinks {
		if err := s.commit(ctx, id); err != nil {
			return fmt.Errorf("commit checkpoint %d: %w", id, err)
		}
	}
	return nil
}

// take captures the task's state for barrier b, forwards the barrier on
// every output (unless the task's input has ended), and hands the blobs to
// a writer that acknowledges the checkpoint once they are stored. An
// unaligned barrier overtakes the queued output instead (overtake).
func (c *taskCheckpoint) take(ctx context.Context, t *Task, b checkpoint.Barrier, alignment time.Duration, ended bool) error {
	c.last = b.ID
	if err := c.run.j.fault(FaultSnapshot, c.name); err != nil {
		c.run.coord.Decline(b.ID, c.name, checkpoint.ReasonTaskFailure, err)
		return err
	}
	var blobs []operator.Blob
	for _, p := range c.parts {
		pbs, err := p.snapshot(ctx, b.ID)
		if err != nil {
			releaseBlobs(blobs)
			c.run.coord.Decline(b.ID, c.name, checkpoint.ReasonTaskFailure, err)
			return fmt.Errorf("checkpoint %d: %w", b.ID, err)
		}
		blobs = append(blobs, pbs...)
	}
	if !ended && c.overtakes(b) {
		return c.overtake(ctx, t, b, blobs)
	}
	if !ended {
		for _, w := range t.writers {
			if err := w.BroadcastEvent(ctx, exchange.Barrier{Barrier: b}); err != nil {
				releaseBlobs(blobs)
				return fmt.Errorf("checkpoint %d: forward the barrier: %w", b.ID, err)
			}
		}
	}
	c.run.write(ctx, b.ID, c.name, blobs, alignment)
	return nil
}

func releaseBlobs(blobs []operator.Blob) {
	for _, b := range blobs {
		if b.Release != nil {
			b.Release()
		}
	}
}

// stopped waits, after the barrier of a savepoint that stops the job, for
// that savepoint to end: once it completes the sinks commit and the task
// leaves; if it fails the task goes on.
func (c *taskCheckpoint) stopped(ctx context.Context, t *Task, id int64) error {
	for {
		select {
		case m := <-c.ctl:
			switch {
			case m.trigger != nil:
			case m.id == id && !m.completed:
				return nil
			case m.completed:
				if err := c.commit(ctx, m.id); err != nil {
					return err
				}
				if m.id >= id {
					return c.leave(ctx)
				}
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// leave flushes the sinks' commits and ends the task after a stop.
func (c *taskCheckpoint) leave(ctx context.Context) error {
	for _, s := range c.sinks {
		if err := s.flush(ctx); err != nil {
			return err
		}
	}
	return errStopped
}

// gateEvent handles a barrier, or a channel's end, for alignment. An
// unaligned checkpoint is taken at its first barrier and acknowledged once
// every channel has delivered it. Any other event is an error: Task.event
// sends only these two here.
func (c *taskCheckpoint) gateEvent(ctx context.Context, t *Task, channel int, ev exchange.Event) error {
	var (
		b           checkpoint.Barrier
		alignment   time.Duration
		first, done bool
	)
	switch e := ev.(type) {
	case exchange.Barrier:
		b = e.Barrier
		if c.rec != nil && b.ID > c.rec.id {
			// The coordinator runs one checkpoint at a time: a newer one
			// means the recorded one failed.
			c.abandon()
		}
		if c.rec != nil && c.rec.id == b.ID {
			// What the barrier overtook in this worker's gate, on a
			// channel from another worker, came before it.
			t.net.takeOvertaken(b.ID, channel, c.rec.enc.input)
		}
		c.arrived(channel, b.ID)
		first, done, alignment = c.align.barrier(t.alignBlocker(), channel, b, c.overtakes(b))
	case exchange.EndOfPartition:
		c.arrived(channel, 0)
		b, alignment, done = c.align.ended(t.alignBlocker(), channel)
	default:
		return unhandledEvent("barrier alignment", channel, ev)
	}
	if first {
		// take acknowledges at once if no channel is left to record.
		return c.take(ctx, t, b, 0, false)
	}
	if !done {
		return nil
	}
	if c.overtakes(b) {
		if c.rec != nil && c.rec.id == b.ID {
			c.acknowledge(ctx)
		}
		return nil
	}
	if err := c.take(ctx, t, b, alignment, false); err != nil {
		return err
	}
	if b.Stop {
		return c.stopped(ctx, t, b.ID)
	}
	return nil
}

// finishInput runs after the task's input ended and its chain finished.
// Without staged output the task is done at once. Otherwise it takes the
// next checkpoint itself (its barriers can no longer arrive) and commits
// once a checkpoint holding its final output completes, so that output
// committed at the end is in a checkpoint too.
func (c *taskCheckpoint) finishInput(ctx context.Context, t *Task) error {
	staged := false
	for _, s := range c.sinks {
		staged = staged || s.staged()
	}
	if !staged {
		return c.close(t)
	}
	c.triggers.Store(true)
	// final is the checkpoint holding the final output, once taken.
	var final int64
	takeFinal := func(b checkpoint.Barrier) error {
		if b.ID <= c.last {
			return nil
		}
		final = b.ID
		return c.take(ctx, t, b, 0, true)
	}
	if b, ok := c.run.coord.InProgress(); ok {
		if err := takeFinal(b); err != nil {
			return err
		}
	}
	c.run.coord.Request()
	for {
		select {
		case m := <-c.ctl:
			switch {
			case m.trigger != nil:
				if err := takeFinal(*m.trigger); err != nil {
					return err
				}
			case m.completed:
				if err := c.commit(ctx, m.id); err != nil {
					return err
				}
				if final > 0 && m.id >= final {
					for _, s := range c.sinks {
						if err := s.flush(ctx); err != nil {
							return err
						}
					}
					return c.close(t)
				}
			case m.id == final:
				c.run.coord.Request()
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// close ends a task whose output is all committed.
func (c *taskCheckpoint) close(t *Task) error {
	if err := c.run.j.fault(FaultClose, c.name); err != nil {
		return err
	}
	c.run.finished(t)
	return nil
}
