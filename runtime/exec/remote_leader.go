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

// aliveEvery is how often a stand-in looks whether its subtask's worker
// still heartbeats.
const aliveEvery = 250 * time.Millisecond

// triggerAgain is how often the leader repeats the trigger of a checkpoint
// still in progress to the other workers: a trigger lost on the way would
// otherwise leave the checkpoint to its timeout. Tasks that took the
// checkpoint ignore the repeat.
const triggerAgain = time.Second

// ErrWorkerGone fails a run one of whose workers stopped heartbeating.
var ErrWorkerGone = errors.New("a worker running part of the job is gone")

// leaderLink is the leader's end of a run spread over workers: it carries
// the coordinator's triggers and notifications to the other workers on the
// run's ctl subject, and takes their reports on its up subject (request and
// reply, so that a worker knows the leader has each), handing
// acknowledgements to the coordinator and ends and failures to the
// stand-ins of their subtasks.
type leaderLink struct {
	j       *Job
	pl      *Placement
	nc      *nats.Conn
	ctl, up string
	sub     *nats.Subscription
	// ready is closed once the coordinator runs; coord is set before.
	ready chan struct{}
	coord coordinator
	// ctx is the run's.
	ctx context.Context

	mu     sync.Mutex
	remote map[string]*remoteTask
	// failed is closed on the run's first failure, err.
	failed chan struct{}
	err    error
}

// remoteTask is the leader's stand-in for a subtask another worker runs:
// its task ends when that worker reports the subtask done, and fails when
// the worker reports a failure or stops heartbeating.
type remoteTask struct {
	l      *leaderLink
	worker string
	done   chan struct{}
}

// newLeaderLink subscribes to the run's reports; the link closes, telling
// the other workers to stop, when ctx (the run's) ends.
func newLeaderLink(ctx context.Context, j *Job, pl *Placement, run *checkpointRun) (*leaderLink, error) {
	l := &leaderLink{j: j, pl: pl, nc: j.Env.JetStream.Conn(), ctx: ctx, ready: make(chan struct{}), remote: map[string]*remoteTask{}, failed: make(chan struct{})}
	l.ctl, l.up = pl.subjects(j.ID)
	if run == nil {
		// No coordinator: nothing waits for one.
		close(l.ready)
	}
	sub, err := l.nc.Subscribe(l.up, l.report)
	if err != nil {
		return nil, fmt.Errorf("subscribe to %s: %w", l.up, err)
	}
	if err := l.nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("subscribe to %s: %w", l.up, err)
	}
	l.sub = sub
	context.AfterFunc(ctx, l.close)
	return l, nil
}

// stand makes the stand-in task for subtask i of v, run by worker.
func (l *leaderLink) stand(name string, i int, worker string) *Task {
	rt := &remoteTask{l: l, worker: worker, done: make(chan struct{})}
	t := &Task{name: name, subtask: i, net: &taskNet{remote: rt}, log: l.j.Log.With("vertex", name, "subtask", i, "worker", worker)}
	l.mu.Lock()
	l.remote[taskID(t)] = rt
	l.mu.Unlock()
	return t
}

// wait is the stand-in's run: until its subtask is done, or the run fails.
func (rt *remoteTask) wait(ctx context.Context) error {
	tick := time.NewTicker(aliveEvery)
	defer tick.Stop()
	for {
		select {
		case <-rt.done:
			return nil
		case <-rt.l.failed:
			return rt.l.failure()
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if rt.l.pl.Alive != nil && !rt.l.pl.Alive(rt.worker) {
				rt.l.fail(fmt.Errorf("%w: worker %s", ErrWorkerGone, rt.worker))
			}
		}
	}
}

// fail fails the run with err, its first failure.
func (l *leaderLink) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = err
		close(l.failed)
	}
}

func (l *leaderLink) failure() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// started hands the link the run's coordinator.
func (l *leaderLink) started(coord coordinator) {
	if l == nil {
		return
	}
	l.coord = coord
	close(l.ready)
	go l.repeatTriggers()
}

// repeatTriggers publishes again the trigger of a checkpoint that has been
// in progress since the last look, every triggerAgain, until the run ends.
func (l *leaderLink) repeatTriggers() {
	tick := time.NewTicker(triggerAgain)
	defer tick.Stop()
	var last int64
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-l.failed:
			return
		case <-tick.C:
		}
		last = l.repeatTrigger(last)
	}
}

// repeatTrigger publishes the trigger of the checkpoint in progress if it
// is checkpoint last, the one in progress at the look before; it returns
// the one in progress now, 0 for none.
func (l *leaderLink) repeatTrigger(last int64) int64 {
	b, ok := l.coord.InProgress()
	if !ok {
		return 0
	}
	if b.ID == last {
		l.publish(runMsg{Op: opTrigger, Barrier: &b})
	}
	return b.ID
}

// trigger tells the other workers' tasks of a checkpoint's barrier.
func (l *leaderLink) trigger(b checkpoint.Barrier) {
	if l != nil {
		l.publish(runMsg{Op: opTrigger, Barrier: &b})
	}
}

// notify tells the other workers' tasks how a checkpoint ended.
func (l *leaderLink) notify(id int64, completed bool) {
	if l != nil {
		l.publish(runMsg{Op: opNotify, ID: id, Completed: completed})
	}
}

// publish sends m on ctl. A lost trigger is repeated (repeatTriggers); a
// lost notification delays a part's commits to the next checkpoint's, as
// a task's full control queue does.
func (l *leaderLink) publish(m runMsg) {
	data, err := json.Marshal(m)
	if err == nil {
		err = l.nc.Publish(l.ctl, data)
	}
	if err != nil {
		l.j.Log.Warn("run control message not sent", "op", m.Op, "error", err)
	}
}

// report handles a worker's report, replying once it is taken.
func (l *leaderLink) report(msg *nats.Msg) {
	m, err := decodeRunMsg(msg.Data)
	if err != nil {
		l.j.Log.Warn("unreadable report from a worker", "error", err)
		return
	}
	switch m.Op {
	case opPressure:
		if l.j.Pressure != nil {
			l.j.Pressure.Merge(m.Pressure)
		}
		l.j.storeCounts(m.Counts)
		return
	case opJoin:
		// A part's tasks are built: it gets the checkpoint in progress,
		// whose trigger it may have missed.
		reply := runMsg{Op: opJoin}
		select {
		case <-l.ready:
			if l.coord != nil {
				if b, ok := l.coord.InProgress(); ok {
					reply = runMsg{Op: opTrigger, Barrier: &b}
				}
			}
		case <-l.failed:
		}
		data, _ := json.Marshal(reply)
		_ = msg.Respond(data)
		return
	case opAck, opDecline, opFinished, opRequest:
		select {
		case <-l.ready:
		case <-l.failed:
			return
		}
		if l.coord == nil {
			break
		}
		switch m.Op {
		case opAck:
			l.coord.Ack(m.ID, m.Task, m.Blobs, m.Alignment, m.InFlight)
		case opDecline:
			l.coord.Decline(m.ID, m.Task, m.Reason, errors.New(m.Err))
		case opFinished:
			l.coord.Finished(m.Task, m.Final)
		case opRequest:
			l.coord.Request()
		}
	case opDone:
		l.j.storeCounts(m.Counts)
		l.mu.Lock()
		for _, name := range m.Tasks {
			if rt, ok := l.remote[name]; ok {
				select {
				case <-rt.done:
				default:
					close(rt.done)
				}
			}
		}
		l.mu.Unlock()
	case opFailed:
		l.fail(fmt.Errorf("worker %s: %s", m.Worker, m.Err))
	}
	_ = msg.Respond(nil)
}

// close tells the other workers the run is over and stops listening.
func (l *leaderLink) close() {
	l.publish(runMsg{Op: opStop})
	_ = l.sub.Unsubscribe()
}
