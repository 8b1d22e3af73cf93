package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"
)

// Tasks is the running job as the coordinator sees it. The runtime
// implements it; its methods must not block.
type Tasks interface {
	// Trigger asks the tasks that start checkpoints (running sources, and
	// tasks at the end of their input waiting for a final commit) to take
	// checkpoint b.
	Trigger(b Barrier)
	// Notify tells every task that checkpoint id completed (sinks commit
	// what it covers) or was abandoned.
	Notify(id int64, completed bool)
}

// Config configures a Coordinator.
type Config struct {
	Job string
	// Interval between the triggers of periodic checkpoints; 0 takes
	// checkpoints only on request (savepoints, final commits).
	Interval time.Duration
	// Timeout abandons a checkpoint not complete this long after its
	// trigger.
	Timeout time.Duration
	// MinPause is the least time between the end of one checkpoint and the
	// trigger of the next periodic one.
	MinPause time.Duration
	// Retain is how many completed checkpoints are kept; savepoints are
	// never deleted.
	Retain int
	Store  Store
	// Tasks names every task that must acknowledge a checkpoint.
	Tasks []string
	// NextID is the id of the first checkpoint this coordinator triggers.
	NextID int64
	// History records every checkpoint; it outlives the coordinator.
	History *History
	Logger  *slog.Logger
	// Fence, when set, records each checkpoint's trigger and completion
	// for the job (cluster mode); nil lets every checkpoint through.
	Fence Fence
}

// Coordinator triggers a job's checkpoints one at a time, collects the
// tasks' acknowledgements and completes a checkpoint by writing its
// metadata, last. One Coordinator serves one run of a job: a restarted job
// gets a new one.
type Coordinator struct {
	cfg   Config
	tasks Tasks
	log   *slog.Logger
	wake  chan struct{}

	mu       sync.Mutex
	nextID   int64
	pending  *pending
	finished map[string]bool
	// final are the blobs of finished tasks (their sources' last
	// positions), written into every checkpoint that counts them.
	final map[string]map[string][]byte
	// requested: a task asked for a checkpoint as soon as possible.
	requested bool
	// savepoints are requested savepoints not yet triggered, in id order.
	savepoints  []Barrier
	lastTrigger time.Time
	lastEnd     time.Time
	stopped     bool
}

// pending is the checkpoint in progress.
type pending struct {
	b         Barrier
	started   time.Time
	acked     map[string]bool
	blobs     map[string]Blob
	alignment time.Duration
	inFlight  int64
	err       *FailureError
}

// errStopped is the cause of the checkpoints a run abandons as it ends.
var errStopped = errors.New("the job stopped before it completed")

// errNotRunning is the cause of a savepoint refused after the run ended.
var errNotRunning = errors.New("the job is not running")

// NewCoordinator makes the coordinator of one run of a job; Run starts it.
func NewCoordinator(cfg Config, tasks Tasks) *Coordinator {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.NextID < 1 {
		cfg.NextID = 1
	}
	if cfg.Retain < 1 {
		cfg.Retain = 1
	}
	return &Coordinator{
		cfg: cfg, tasks: tasks, log: cfg.Logger.With("job", cfg.Job), wake: make(chan struct{}, 1),
		nextID: cfg.NextID, finished: map[string]bool{}, final: map[string]map[string][]byte{}, lastTrigger: time.Now(),
	}
}

func (c *Coordinator) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// NextID is the id the next checkpoint will take.
func (c *Coordinator) NextID() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nextID
}

// Request asks for a checkpoint as soon as one may start: a task at the end
// of its input waits for one to commit its last output.
func (c *Coordinator) Request() {
	c.mu.Lock()
	c.requested = true
	c.mu.Unlock()
	c.poke()
}

// Savepoint queues a savepoint and returns its id; it is triggered as soon as
// the checkpoint in progress, if any, ends. With stop, the job's sources
// stop after it.
func (c *Coordinator) Savepoint(stop bool) (int64, error) {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return 0, fmt.Errorf("job %s: savepoint: %w", c.cfg.Job, &FailureError{Reason: ReasonJobNotRunning, Err: errNotRunning})
	}
	b := Barrier{ID: c.nextID, Kind: KindSavepoint, Stop: stop}
	c.nextID++
	c.savepoints = append(c.savepoints, b)
	// In the history before Run can take it off the queue and end it.
	c.cfg.History.begin(Stats{ID: b.ID, Kind: KindSavepoint, Triggered: time.Now().UTC(), Stop: stop})
	c.mu.Unlock()
	c.poke()
	return b.ID, nil
}

// Ack records a task's part of checkpoint id: the blobs it stored, how
// long it aligned barriers, and how many of the bytes stored are in-flight
// data of an unaligned checkpoint. Acks of checkpoints no longer in
// progress are ignored.
func (c *Coordinator) Ack(id int64, task string, blobs map[string]Blob, alignment time.Duration, inFlight int64) {
	c.mu.Lock()
	p := c.pending
	if p == nil || p.b.ID != id || p.acked[task] {
		c.mu.Unlock()
		return
	}
	p.acked[task] = true
	for name, b := range blobs {
		p.blobs[name] = b
	}
	p.alignment = max(p.alignment, alignment)
	p.inFlight += inFlight
	c.mu.Unlock()
	c.poke()
}

// Decline fails checkpoint id: task could not take its part, for reason
// and the cause err. Declines of checkpoints no longer in progress are
// ignored, and so is any after the first.
func (c *Coordinator) Decline(id int64, task string, reason FailureReason, err error) {
	c.mu.Lock()
	if p := c.pending; p != nil && p.b.ID == id && p.err == nil {
		p.err = &FailureError{Reason: reason, Checkpoint: id, Task: task, Err: err}
	}
	c.mu.Unlock()
	c.poke()
}

// Finished records that a task has ended after all its input and committed
// its output: it stands acknowledged in every checkpoint from now on with
// the small final blobs given (see Metadata.Finished).
func (c *Coordinator) Finished(task string, final map[string][]byte) {
	c.mu.Lock()
	c.finished[task] = true
	c.final[task] = final
	c.mu.Unlock()
	c.poke()
}

// Run triggers, times out and completes checkpoints until ctx ends; then it
// abandons the checkpoint in progress and any queued savepoint.
func (c *Coordinator) Run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next := c.step(ctx)
		timer.Reset(time.Until(next))
		select {
		case <-ctx.Done():
			c.shutdown()
			return
		case <-c.wake:
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// step moves the checkpoint in progress on, or starts one when it is due, and
// returns when it wants to run again.
func (c *Coordinator) step(ctx context.Context) time.Time {
	now := time.Now()
	c.mu.Lock()
	p := c.pending
	if p != nil {
		switch {
		case p.err != nil:
			c.pending = nil
			c.mu.Unlock()
			c.fail(p, p.err)
			return now
		case c.ready(p):
			c.pending = nil
			c.mu.Unlock()
			c.complete(ctx, p)
			return now
		case now.Sub(p.started) >= c.cfg.Timeout:
			c.pending = nil
			c.mu.Unlock()
			c.fail(p, c.failure(p, ReasonExpired, fmt.Errorf("not complete after the timeout of %s", c.cfg.Timeout)))
			return now
		}
		c.mu.Unlock()
		return p.started.Add(c.cfg.Timeout)
	}
	var b Barrier
	switch {
	case len(c.savepoints) > 0:
		b = c.savepoints[0]
		c.savepoints = c.savepoints[1:]
	case c.periodicDue(now):
		b = Barrier{ID: c.nextID, Kind: KindCheckpoint}
		c.nextID++
	default:
		next := c.nextPeriodic()
		c.mu.Unlock()
		return next
	}
	c.requested = false
	c.lastTrigger = now
	c.mu.Unlock()
	if b.Kind == KindCheckpoint {
		c.cfg.History.begin(Stats{ID: b.ID, Kind: b.Kind, Triggered: now.UTC()})
	}
	// The fence is asked with no checkpoint in progress: until it agrees,
	// no task may take this one.
	if err := c.fenceTrigger(ctx, b); err != nil {
		c.record(b, now, err)
		// A queued savepoint may be next.
		return time.Now()
	}
	p = &pending{b: b, started: now, acked: map[string]bool{}, blobs: map[string]Blob{}}
	c.mu.Lock()
	c.pending = p
	c.mu.Unlock()
	c.tasks.Trigger(b)
	return now
}

// periodicDue says whether a checkpoint should start now; c.mu is held.
func (c *Coordinator) periodicDue(now time.Time) bool {
	if now.Before(c.lastEnd.Add(c.cfg.MinPause)) {
		return false
	}
	return c.requested || c.cfg.Interval > 0 && !now.Before(c.lastTrigger.Add(c.cfg.Interval))
}

// nextPeriodic is when the next periodic checkpoint is due; c.mu is held.
func (c *Coordinator) nextPeriodic() time.Time {
	pause := c.lastEnd.Add(c.cfg.MinPause)
	if c.requested {
		return pause
	}
	if c.cfg.Interval <= 0 {
		return time.Now().Add(time.Hour)
	}
	next := c.lastTrigger.Add(c.cfg.Interval)
	if pause.After(next) {
		return pause
	}
	return next
}

// ready says whether every task has acknowledged p or finished; c.mu is held.
func (c *Coordinator) ready(p *pending) bool {
	for _, t := range c.cfg.Tasks {
		if !p.acked[t] && !c.finished[t] {
			return false
		}
	}
	return true
}

// complete writes p's metadata, prunes old checkpoints and tells the tasks.
func (c *Coordinator) complete(ctx context.Context, p *pending) {
	c.mu.Lock()
	var finished []string
	final := map[string][]byte{}
	for _, t := range c.cfg.Tasks {
		if !p.acked[t] && c.finished[t] {
			finished = append(finished, t)
			for name, data := range c.final[t] {
				final[name] = data
			}
		}
	}
	c.mu.Unlock()
	sort.Strings(finished)
	for name, data := range final {
		ref, err := c.cfg.Store.PutBlob(ctx, c.cfg.Job, p.b.ID, name, data)
		if err != nil {
			c.fail(p, c.failure(p, ReasonStorageFailure, fmt.Errorf("write the blob of a finished task: %w", err)))
			return
		}
		p.blobs[name] = ref
	}
	m := &Metadata{
		Job: c.cfg.Job, ID: p.b.ID, Kind: p.b.Kind, Created: p.started.UTC(), Duration: time.Since(p.started),
		Blobs: p.blobs, Finished: finished, Alignment: p.alignment,
	}
	if err := c.cfg.Store.Commit(ctx, m); err != nil {
		c.fail(p, c.failure(p, ReasonStorageFailure, fmt.Errorf("write metadata: %w", err)))
		return
	}
	if err := c.fenceComplete(ctx, p.b.ID); err != nil {
		c.fail(p, err)
		return
	}
	c.mu.Lock()
	c.lastEnd = time.Now()
	c.mu.Unlock()
	c.cfg.History.end(p.b.ID, func(s *Stats) {
		s.Status, s.Duration, s.Size, s.Alignment, s.InFlight = StatusCompleted, m.Duration, m.Size(), p.alignment, p.inFlight
	})
	c.log.Debug("checkpoint completed", "checkpoint", p.b.ID, "kind", p.b.Kind, "duration", m.Duration, "size", m.Size())
	c.tasks.Notify(p.b.ID, true)
	if err := Prune(ctx, c.cfg.Store, c.cfg.Job, c.cfg.Retain); err != nil {
		c.log.Warn("pruning old checkpoints failed", "error", err)
	}
}

// failure is the coordinator's own reason to fail p.
func (c *Coordinator) failure(p *pending, reason FailureReason, err error) *FailureError {
	return &FailureError{Reason: reason, Checkpoint: p.b.ID, Err: err}
}

// fail abandons p for err and tells the tasks.
func (c *Coordinator) fail(p *pending, err *FailureError) {
	c.record(p.b, p.started, err)
	c.tasks.Notify(p.b.ID, false)
}

// record notes that checkpoint b, triggered at started, failed for err.
func (c *Coordinator) record(b Barrier, started time.Time, err *FailureError) {
	c.mu.Lock()
	c.lastEnd = time.Now()
	c.mu.Unlock()
	c.cfg.History.end(b.ID, func(s *Stats) { s.failed(time.Since(started), err) })
	c.log.Warn("checkpoint failed", "checkpoint", b.ID, "kind", b.Kind, "reason", err.Reason, "error", err)
}

// shutdown abandons what is in progress when the run ends.
func (c *Coordinator) shutdown() {
	c.mu.Lock()
	c.stopped = true
	p, queued := c.pending, c.savepoints
	c.pending, c.savepoints = nil, nil
	var err *FailureError
	if p != nil {
		// A task that declined before the run ended gave the better reason.
		err = p.err
		if err == nil {
			err = c.failure(p, ReasonJobStopped, errStopped)
		}
	}
	c.mu.Unlock()
	if p != nil {
		c.cfg.History.end(p.b.ID, func(s *Stats) { s.failed(time.Since(p.started), err) })
	}
	for _, b := range queued {
		err := &FailureError{Reason: ReasonJobStopped, Checkpoint: b.ID, Err: errStopped}
		c.cfg.History.end(b.ID, func(s *Stats) { s.failed(0, err) })
	}
}

// InProgress is the checkpoint in progress, if any.
func (c *Coordinator) InProgress() (Barrier, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending == nil {
		return Barrier{}, false
	}
	return c.pending.b, true
}
