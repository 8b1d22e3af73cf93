package exec

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
)

// checkpointRun is checkpointing during one run of a job: the coordinator
// and the tasks it drives. It implements checkpoint.Tasks for the
// coordinator's goroutine; write starts the goroutines that store a task's
// blobs, which Wait waits for.
type checkpointRun struct {
	j  *Job
	cp *Checkpoints
	// coord is the run's coordinator: the job's own, or on a worker that
	// runs part of the job, the link to the leader's (remote_part.go).
	coord       coordinator
	tasks       []*Task
	exactlyOnce bool
	// unaligned: checkpoints (not savepoints) travel unaligned.
	unaligned bool
	writers   sync.WaitGroup
	// leader, when the run has subtasks on other workers, tells them of
	// triggers and notifications (remote_leader.go).
	leader *leaderLink
}

// coordinator is what a run's tasks ask of the checkpoint coordinator.
type coordinator interface {
	Ack(id int64, task string, blobs map[string]checkpoint.Blob, alignment time.Duration, inFlight int64)
	Decline(id int64, task string, reason checkpoint.FailureReason, err error)
	Finished(task string, final map[string][]byte)
	InProgress() (checkpoint.Barrier, bool)
	Request()
}

// taskID names a task to the coordinator: its chain head and subtask.
func taskID(t *Task) string { return t.name + "[" + strconv.Itoa(t.subtask) + "]" }

// newCheckpointRun prepares checkpointing for the run about to start.
func (j *Job) newCheckpointRun() *checkpointRun {
	cp := j.Checkpoints
	exactlyOnce := cp.cfg.Mode == plan.ModeExactlyOnce
	return &checkpointRun{j: j, cp: cp, exactlyOnce: exactlyOnce, unaligned: exactlyOnce && cp.cfg.Unaligned}
}

// start creates the coordinator over the built tasks and runs it until ctx
// ends; the returned function stops it and waits for the blob writers.
func (r *checkpointRun) start(ctx context.Context, tasks []*Task, nextID int64) (stop func()) {
	r.tasks = tasks
	names := make([]string, len(tasks))
	for i, t := range tasks {
		names[i] = taskID(t)
	}
	cfg := r.cp.cfg
	coord := checkpoint.NewCoordinator(checkpoint.Config{
		Job: r.j.ID, Interval: cfg.Interval.Duration, Timeout: cfg.Timeout.Duration, MinPause: cfg.MinPause.Duration,
		Retain: cfg.Retain, Store: r.cp.Store, Tasks: names, NextID: nextID, History: r.cp.History, Logger: r.j.Log,
		// A nil Lineage is a nil Fence.
		Fence: r.cp.Lineage,
	}, r)
	r.coord = coord
	r.cp.mu.Lock()
	r.cp.coord = coord
	r.cp.mu.Unlock()
	r.leader.started(coord)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		coord.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
		r.writers.Wait()
		r.cp.mu.Lock()
		r.cp.coord = nil
		r.cp.nextID = coord.NextID()
		r.cp.mu.Unlock()
	}
}

// Trigger implements checkpoint.Tasks.
func (r *checkpointRun) Trigger(b checkpoint.Barrier) {
	r.leader.trigger(b)
	for _, t := range r.tasks {
		if t.cp != nil && t.cp.triggers.Load() {
			t.cp.send(control{trigger: &b})
		}
	}
}

// Notify implements checkpoint.Tasks.
func (r *checkpointRun) Notify(id int64, completed bool) {
	r.leader.notify(id, completed)
	for _, t := range r.tasks {
		if t.cp == nil {
			// The stand-in of a subtask on another worker.
			continue
		}
		t.cp.send(control{id: id, completed: completed})
		if t.gate != nil {
			t.gate.Wakeup()
		}
	}
}

// write stores a task's blobs for checkpoint id on a goroutine of its own,
// then acknowledges the checkpoint (or declines it).
func (r *checkpointRun) write(ctx context.Context, id int64, task string, blobs []operator.Blob, alignment time.Duration) {
	r.writers.Add(1)
	go func() {
		defer r.writers.Done()
		refs := make(map[string]checkpoint.Blob, len(blobs))
		var (
			err      error
			inFlight int64
		)
		for _, b := range blobs {
			if err == nil {
				refs[b.Name], err = r.put(ctx, id, b)
				if b.InFlight {
					inFlight += refs[b.Name].Size
				}
			}
			if b.Release != nil {
				b.Release()
			}
		}
		if err != nil {
			r.coord.Decline(id, task, checkpoint.ReasonStorageFailure, err)
			return
		}
		r.coord.Ack(id, task, refs, alignment, inFlight)
	}()
}

func (r *checkpointRun) put(ctx context.Context, id int64, b operator.Blob) (checkpoint.Blob, error) {
	store := r.cp.Store
	switch {
	case b.Reader != nil:
		return store.PutBlobFrom(ctx, r.j.ID, id, b.Name, b.Reader)
	case b.Write != nil:
		pr, pw := io.Pipe()
		wrote := make(chan struct{})
		go func() {
			defer close(wrote)
			pw.CloseWithError(b.Write(ctx, pw))
		}()
		ref, err := store.PutBlobFrom(ctx, r.j.ID, id, b.Name, pr)
		pr.CloseWithError(fmt.Errorf("blob %s: stored", b.Name))
		// A store that returns early (a failure, ctx ended) leaves Write
		// reading the snapshot: the caller releases it only once Write
		// has returned, which the closed pipe makes it do.
		<-wrote
		return ref, err
	}
	return store.PutBlob(ctx, r.j.ID, id, b.Name, b.Data)
}

// finished tells the coordinator that task t has ended after all its input,
// with its final blobs (a source's last positions).
func (r *checkpointRun) finished(t *Task) {
	final := map[string][]byte{}
	for _, p := range t.cp.parts {
		if f, ok := p.(interface {
			final() (string, []byte, bool)
		}); ok {
			if name, data, ok := f.final(); ok {
				final[name] = data
			}
		}
	}
	r.coord.Finished(taskID(t), final)
}
