package exec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"wasmstream.io/platform/checkpoint"
)

// Reports to the leader: each waits this long for its reply, and is sent
// again until the part ends. reportQueue bounds the reports not sent yet: a
// few per checkpoint and task.
const (
	reportTimeout = 2 * time.Second
	reportQueue   = 1024
)

// ErrStopped ends a part the leader stopped: its run is over.
var ErrStopped = errors.New("the job's leader ended the run")

// partLink is a worker's end of a run whose leader is another worker: it
// takes the leader's triggers and notifications on the run's ctl subject,
// and stands in for the coordinator to the worker's tasks, sending their
// acknowledgements and the part's end to the leader, in order.
type partLink struct {
	j       *Job
	pl      *Placement
	run     *checkpointRun
	nc      *nats.Conn
	ctl, up string
	sub     *nats.Subscription
	cancel  context.CancelFunc

	mu      sync.Mutex
	pending *checkpoint.Barrier
	err     error
	// ready: the run's tasks are set (runTasks), so that the leader's
	// triggers and notifications reach them; before, a trigger is left to
	// the join's answer, which names the checkpoint in progress.
	ready bool

	queue chan runMsg
	sent  chan struct{}
}

// RunPart runs this worker's subtasks of one run of the job, placed by the
// job's leader, until they end, the run fails or the leader stops it (or
// ctx ends). Its tasks restore the checkpoint the leader chose; their
// checkpoints go to the leader's coordinator, and their ends and failures
// to the leader, which restarts the whole job after a failure.
func (j *Job) RunPart(outer context.Context, pl *Placement) error {
	ctx, cancel := context.WithCancel(outer)
	defer cancel()
	var run *checkpointRun
	if j.Checkpoints != nil {
		run = j.newCheckpointRun()
	}
	l, err := newPartLink(j, pl, run, cancel)
	if err != nil {
		return err
	}
	err = l.runTasks(ctx)
	switch {
	case errors.Is(err, ErrStopped):
		err = nil
	case err != nil && outer.Err() != nil:
		// Stopped from outside: the run was superseded or its leader is
		// gone.
	case err != nil:
		l.send(runMsg{Op: opFailed, Err: err.Error()})
	}
	l.close()
	return err
}

// runTasks builds and runs the part's tasks, then reports them done.
func (l *partLink) runTasks(ctx context.Context) error {
	j := l.j
	restore, err := j.partRestore(ctx, l.pl)
	if err != nil {
		return err
	}
	j.part, j.partFail = l.pl, l.fail
	tasks, err := j.build(ctx, l.run, restore)
	if err != nil {
		return err
	}
	if l.run != nil {
		l.mu.Lock()
		l.run.coord, l.run.tasks = l, tasks
		l.ready = true
		l.mu.Unlock()
		if err := l.join(ctx); err != nil {
			for _, t := range tasks {
				_ = t.close()
			}
			return err
		}
	}
	if j.Observer != nil {
		done := j.Observer.Running(tasks)
		defer done()
	}
	go l.sendFigures(ctx, tasks)
	err = runTasks(ctx, l.cancel, tasks)
	if l.run != nil {
		l.run.writers.Wait()
	}
	if err == nil {
		err = l.failure()
	}
	if err == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return err
	}
	names := make([]string, len(tasks))
	for i, t := range tasks {
		names[i] = taskID(t)
	}
	l.send(runMsg{Op: opDone, Tasks: names, Counts: j.partCounts(subtaskKeys(tasks))})
	return nil
}

// sendFigures publishes the part's backpressure samples and figures to the
// leader every PressureInterval until ctx ends, so that the job's
// backpressure and figures show every worker's subtasks. A lost message is
// replaced by the next; the done report carries the final figures.
func (l *partLink) sendFigures(ctx context.Context, tasks []*Task) {
	mine := subtaskKeys(tasks)
	tick := time.NewTicker(PressureInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		m := runMsg{Op: opPressure, Worker: l.pl.Self, Counts: l.j.partCounts(mine)}
		if l.j.Pressure != nil {
			_, samples := l.j.Pressure.Snapshot()
			for k, s := range samples {
				if mine[k] {
					m.Pressure = append(m.Pressure, RemoteSample{Task: k.Task, Subtask: k.Subtask, Sample: s})
				}
			}
		}
		if data, err := json.Marshal(m); err == nil {
			_ = l.nc.Publish(l.up, data)
		}
	}
}

// partRestore is the checkpoint the leader chose for the run, nil for none.
func (j *Job) partRestore(ctx context.Context, pl *Placement) (*RestoreSet, error) {
	if pl.Restore == 0 || j.Checkpoints == nil {
		return nil, nil
	}
	cp := j.Checkpoints
	m, err := FindCheckpoint(ctx, cp.Store, pl.RestoreJob, pl.Restore)
	if err != nil {
		return nil, &RestoreError{Job: j.ID, Checkpoint: pl.Restore, Err: err}
	}
	r := &RestoreSet{store: cp.Store, meta: m, allowNonRestored: cp.AllowNonRestored}
	if err := r.Check(j.Plan); err != nil {
		return nil, err
	}
	return r, nil
}

func newPartLink(j *Job, pl *Placement, run *checkpointRun, cancel context.CancelFunc) (*partLink, error) {
	l := &partLink{j: j, pl: pl, run: run, nc: j.Env.JetStream.Conn(), cancel: cancel, queue: make(chan runMsg, reportQueue), sent: make(chan struct{})}
	l.ctl, l.up = pl.subjects(j.ID)
	sub, err := l.nc.Subscribe(l.ctl, l.control)
	if err != nil {
		return nil, fmt.Errorf("subscribe to %s: %w", l.ctl, err)
	}
	if err := l.nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("subscribe to %s: %w", l.ctl, err)
	}
	l.sub = sub
	go l.sendLoop()
	return l, nil
}

// join tells the leader the part's tasks are built and takes the
// checkpoint in progress, whose trigger may have come before.
func (l *partLink) join(ctx context.Context) error {
	data, _ := json.Marshal(runMsg{Op: opJoin, Worker: l.pl.Self})
	for {
		reply, err := l.nc.RequestWithContext(ctx, l.up, data)
		if err == nil {
			l.control(reply)
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if l.pl.Alive != nil && !l.pl.Alive(l.pl.Leader) {
			return fmt.Errorf("join the run: leader %s is gone: %w", l.pl.Leader, err)
		}
		select {
		case <-time.After(aliveEvery):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// control handles a message of the leader.
func (l *partLink) control(msg *nats.Msg) {
	m, err := decodeRunMsg(msg.Data)
	if err != nil {
		l.j.Log.Warn("unreadable control message from the leader", "error", err)
		return
	}
	switch m.Op {
	case opStop:
		l.fail(ErrStopped)
	case opTrigger:
		if m.Barrier == nil || l.run == nil {
			return
		}
		l.mu.Lock()
		b := *m.Barrier
		l.pending = &b
		ready := l.ready
		l.mu.Unlock()
		if ready {
			l.run.Trigger(b)
		}
	case opNotify:
		if l.run == nil {
			return
		}
		l.mu.Lock()
		if l.pending != nil && l.pending.ID <= m.ID {
			l.pending = nil
		}
		ready := l.ready
		l.mu.Unlock()
		if ready {
			l.run.Notify(m.ID, m.Completed)
		}
	}
}

// fail ends the part with err, its first failure.
func (l *partLink) fail(err error) {
	l.mu.Lock()
	if l.err == nil {
		l.err = err
	}
	l.mu.Unlock()
	l.cancel()
}

func (l *partLink) failure() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// send queues a report to the leader; a full queue (the leader unreachable
// for long) fails the part.
func (l *partLink) send(m runMsg) {
	m.Worker = l.pl.Self
	select {
	case l.queue <- m:
	default:
		l.fail(fmt.Errorf("reports to the leader %s: %d not sent yet", l.pl.Leader, reportQueue))
	}
}

// sendLoop sends the queued reports one after the other, each until the
// leader replies, giving up on the rest once the part failed and the
// leader is gone, or has stopped the run.
func (l *partLink) sendLoop() {
	defer close(l.sent)
	for m := range l.queue {
		data, err := json.Marshal(m)
		if err != nil {
			l.j.Log.Warn("report not sent", "op", m.Op, "error", err)
			continue
		}
		for {
			if _, err = l.nc.Request(l.up, data, reportTimeout); err == nil {
				break
			}
			if errors.Is(l.failure(), ErrStopped) || l.pl.Alive != nil && !l.pl.Alive(l.pl.Leader) || errors.Is(err, nats.ErrConnectionClosed) {
				break
			}
		}
	}
}

// close sends what is queued, then stops listening.
func (l *partLink) close() {
	close(l.queue)
	<-l.sent
	_ = l.sub.Unsubscribe()
}

// Ack implements coordinator: the leader's coordinator gets it.
func (l *partLink) Ack(id int64, task string, blobs map[string]checkpoint.Blob, alignment time.Duration, inFlight int64) {
	l.send(runMsg{Op: opAck, ID: id, Task: task, Blobs: blobs, Alignment: alignment, InFlight: inFlight})
}

// Decline implements coordinator.
func (l *partLink) Decline(id int64, task string, reason checkpoint.FailureReason, err error) {
	l.send(runMsg{Op: opDecline, ID: id, Task: task, Reason: reason, Err: err.Error()})
}

// Finished implements coordinator.
func (l *partLink) Finished(task string, final map[string][]byte) {
	l.send(runMsg{Op: opFinished, Task: task, Final: final})
}

// Request implements coordinator.
func (l *partLink) Request() { l.send(runMsg{Op: opRequest}) }

// InProgress implements coordinator: the checkpoint the leader triggered
// last and has not yet said the end of.
func (l *partLink) InProgress() (checkpoint.Barrier, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending == nil {
		return checkpoint.Barrier{}, false
	}
	return *l.pending, true
}
