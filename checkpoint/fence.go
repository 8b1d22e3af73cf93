package checkpoint

import (
	"context"
	"fmt"
	"time"
)

// Fence guards a job's checkpoint ids and completions when more than one
// process may run the job (cluster mode, where a job runs on the worker
// holding its lease). A process that lost the lease without noticing (it
// was paused, then resumed) must neither take a checkpoint id the new owner
// takes too, which would mix their blobs in the store, nor complete a
// checkpoint after the new owner took over, which the new owner could
// restore and its sinks commit on. The Coordinator calls it from its Run
// goroutine, never holding its mutex. With no Fence (one process runs each
// job) every checkpoint is let through.
type Fence interface {
	// Trigger records that checkpoint id is about to be triggered. An
	// error (the job's lease has moved, or the record could not be
	// written) means the checkpoint is not triggered: it fails without a
	// barrier, and its id is not taken again.
	Trigger(ctx context.Context, id int64) error
	// Complete records that checkpoint id completed. It is called after
	// the metadata is written and before any task is told. An error means
	// the checkpoint does not count: it fails, the tasks are told it was
	// abandoned, and its metadata and blobs are deleted.
	Complete(ctx context.Context, id int64) error
}

// discardTimeout bounds the deletion of a checkpoint the fence refused to
// complete, which goes on when the run is ending.
const discardTimeout = 30 * time.Second

// fenceTrigger asks the fence, if any, to let checkpoint b be triggered.
func (c *Coordinator) fenceTrigger(ctx context.Context, b Barrier) *FailureError {
	if c.cfg.Fence == nil {
		return nil
	}
	if err := c.cfg.Fence.Trigger(ctx, b.ID); err != nil {
		return c.fenced(ctx, b.ID, fmt.Errorf("record the trigger: %w", err))
	}
	return nil
}

// fenceComplete asks the fence, if any, to let checkpoint id, whose
// metadata is written, count; when it refuses, the checkpoint is deleted
// (best effort) so that no listing shows it.
func (c *Coordinator) fenceComplete(ctx context.Context, id int64) *FailureError {
	if c.cfg.Fence == nil {
		return nil
	}
	err := c.cfg.Fence.Complete(ctx, id)
	if err == nil {
		return nil
	}
	fe := c.fenced(ctx, id, fmt.Errorf("record the completion: %w", err))
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), discardTimeout)
	defer cancel()
	if err := c.cfg.Store.Delete(dctx, c.cfg.Job, id); err != nil {
		c.log.Warn("deleting a checkpoint that does not count failed", "checkpoint", id, "error", err)
	}
	return fe
}

// fenced is the failure of checkpoint id the fence refused for err: fenced,
// or job_stopped when the refusal came from the run ending.
func (c *Coordinator) fenced(ctx context.Context, id int64, err error) *FailureError {
	if ctx.Err() != nil {
		return &FailureError{Reason: ReasonJobStopped, Checkpoint: id, Err: fmt.Errorf("%w: %w", errStopped, err)}
	}
	return &FailureError{Reason: ReasonFenced, Checkpoint: id, Err: err}
}
