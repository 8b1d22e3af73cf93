package exec

import (
	"context"
	"errors"
	"fmt"
	"time"

	"wasmstream.io/platform/runtime/spec"
)

// Restart strategies of the job spec.
const (
	restartNone        = "none"
	restartFixedDelay  = "fixed_delay"
	RestartExponential = "exponential"
)

// RestartPolicy is a job's restart strategy.
type RestartPolicy struct {
	strategy    string
	maxAttempts int
	delay       time.Duration
	maxDelay    time.Duration
}

func NewRestartPolicy(r *spec.Restart) RestartPolicy {
	if r == nil {
		return RestartPolicy{strategy: restartNone}
	}
	return RestartPolicy{strategy: r.Strategy, maxAttempts: r.MaxAttempts, delay: r.Delay.Duration, maxDelay: r.MaxDelay.Duration}
}

// next is the wait before restart number attempt (from 1), or false when
// the strategy allows no more.
func (p RestartPolicy) next(attempt int) (time.Duration, bool) {
	if p.strategy == restartNone || p.strategy == "" || p.maxAttempts > 0 && attempt > p.maxAttempts {
		return 0, false
	}
	if p.strategy != RestartExponential {
		return p.delay, true
	}
	d := p.delay
	for i := 1; i < attempt && d < p.maxDelay; i++ {
		d *= 2
	}
	return min(d, p.maxDelay), true
}

// RunWithRestarts runs the job until it ends, restarting it from its latest
// checkpoint (or from the start, without checkpoints) after a failure, as
// its restart strategy allows. A job that cannot be restored fails at once.
func (j *Job) RunWithRestarts(ctx context.Context) error {
	policy := NewRestartPolicy(j.Plan.Job.Restart)
	for attempt := 1; ; attempt++ {
		var reconnects uint64
		if j.Env.NATS != nil {
			reconnects = j.Env.NATS.Reconnects()
		}
		err := j.runOnce(ctx)
		if err == nil || ctx.Err() != nil {
			return err
		}
		var restore *RestoreError
		if errors.As(err, &restore) {
			return err
		}
		if j.natsLost(ctx, reconnects) {
			// A failure of NATS, not of the job: it pauses until NATS
			// is back, then goes on from its latest checkpoint.
			j.Observer.Restarting(attempt, 0, fmt.Errorf("NATS connection lost: %w", err))
			j.Log.Warn("NATS connection lost: the job waits for it, then restarts from its latest checkpoint")
			if err := j.Env.NATS.WaitConnected(ctx); err != nil {
				return err
			}
			attempt--
			continue
		}
		delay, ok := policy.next(attempt)
		if !ok {
			if attempt > 1 {
				return fmt.Errorf("%w (after %d restarts)", err, attempt-1)
			}
			return err
		}
		j.Observer.Restarting(attempt, delay, err)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// natsLost reports whether the NATS connection was lost since it had
// reconnects re-establishments, or is lost now.
func (j *Job) natsLost(ctx context.Context, reconnects uint64) bool {
	n := j.Env.NATS
	if n == nil {
		return false
	}
	wait, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	return n.WaitConnected(wait) != nil || n.Reconnects() != reconnects
}

// runOnce builds the tasks, restoring the latest checkpoint, and runs them
// (with the checkpoint coordinator, when the job takes checkpoints) until
// they all finish or one fails.
func (j *Job) runOnce(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		run     *checkpointRun
		restore *RestoreSet
		nextID  int64 = 1
	)
	if cp := j.Checkpoints; cp != nil {
		var err error
		if restore, err = cp.latest(ctx, j.ID); err != nil {
			return err
		}
		run = j.newCheckpointRun()
		if restore != nil {
			if err := restore.Check(j.Plan); err != nil {
				return err
			}
		}
		nextID = cp.firstID(j.ID, restore)
	}
	began := time.Now()
	tasks, err := j.build(ctx, run, restore)
	if err != nil {
		return err
	}
	if restore != nil {
		j.Checkpoints.restoredFrom(restore, time.Since(began))
		j.Log.Info("job restored", "checkpoint", restore.meta.ID, "kind", restore.meta.Kind, "from_job", restore.meta.Job, "duration", time.Since(began))
	}
	done := j.Observer.Running(tasks)
	defer done()
	if run != nil {
		stop := run.start(ctx, tasks, nextID)
		defer stop()
	}
	return runTasks(ctx, cancel, tasks)
}

// LongestDelay is the longest the policy waits before a restart.
func (p RestartPolicy) LongestDelay() time.Duration {
	if p.strategy == RestartExponential {
		return p.maxDelay
	}
	return p.delay
}
