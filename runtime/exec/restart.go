package exec

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"wasmstream.io/platform/runtime/spec"
)

// Restart strategies of the job spec.
const (
	restartNone        = "none"
	restartFixedDelay  = "fixed_delay"
	RestartExponential = "exponential"
	restartFailureRate = "failure_rate"
)

// RestartPolicy is a job's restart strategy, as the spec gives it.
type RestartPolicy struct {
	strategy    string
	maxAttempts int
	delay       time.Duration
	maxDelay    time.Duration
	multiplier  float64
	jitter      float64
	resetAfter  time.Duration
	maxFailures int
	interval    time.Duration
}

func NewRestartPolicy(r *spec.Restart) RestartPolicy {
	if r == nil {
		return RestartPolicy{strategy: restartNone}
	}
	return RestartPolicy{
		strategy: r.Strategy, maxAttempts: r.MaxAttempts, delay: r.Delay.Duration, maxDelay: r.MaxDelay.Duration,
		multiplier: r.Multiplier, jitter: r.Jitter, resetAfter: r.ResetAfter.Duration,
		maxFailures: r.MaxFailuresPerInterval, interval: r.Interval.Duration,
	}
}

// LongestDelay is the longest the policy waits before a restart.
func (p RestartPolicy) LongestDelay() time.Duration {
	if p.strategy == RestartExponential {
		return p.maxDelay
	}
	return p.delay
}

// restartDecision is what a strategy makes of one failure.
type restartDecision struct {
	// Restart: the job runs again after Delay; otherwise it fails.
	Restart bool
	Delay   time.Duration
	// Attempt numbers the restart from 1: since the last reset for
	// exponential, over the job's life for the others.
	Attempt int
}

// restarts is a restart strategy applied over a job's life: the failures it
// has counted and the delay it waits next. Only RunWithRestarts's goroutine
// uses it.
type restarts struct {
	p RestartPolicy
	// attempts are the restarts counted against max_attempts (fixed_delay,
	// exponential) or made so far (failure_rate).
	attempts int
	// backoff is the exponential strategy's next delay before jitter.
	backoff time.Duration
	// failures are the failure_rate strategy's failures inside the last
	// interval, oldest first: at most max_failures_per_interval+1.
	failures []time.Time
	// random gives the jitter's draw, in [0, 1).
	random func() float64
}

func newRestarts(p RestartPolicy) *restarts {
	return &restarts{p: p, backoff: p.delay, random: rand.Float64}
}

// failed decides on a run that started at started and failed at now.
func (r *restarts) failed(started, now time.Time) restartDecision {
	p := r.p
	switch p.strategy {
	case restartFixedDelay:
		r.attempts++
		if p.maxAttempts > 0 && r.attempts > p.maxAttempts {
			return restartDecision{}
		}
		return restartDecision{Restart: true, Delay: p.delay, Attempt: r.attempts}
	case RestartExponential:
		if p.resetAfter > 0 && now.Sub(started) >= p.resetAfter {
			// A run that held for reset_after ends the failure streak:
			// the next restart is a first one again.
			r.attempts, r.backoff = 0, p.delay
		}
		r.attempts++
		if p.maxAttempts > 0 && r.attempts > p.maxAttempts {
			return restartDecision{}
		}
		d := r.backoff
		r.backoff = min(time.Duration(float64(r.backoff)*p.multiplier), p.maxDelay)
		return restartDecision{Restart: true, Delay: r.jittered(d), Attempt: r.attempts}
	case restartFailureRate:
		keep := r.failures[:0]
		for _, t := range r.failures {
			if now.Sub(t) < p.interval {
				keep = append(keep, t)
			}
		}
		r.failures = append(keep, now)
		if len(r.failures) > p.maxFailures {
			return restartDecision{}
		}
		r.attempts++
		return restartDecision{Restart: true, Delay: p.delay, Attempt: r.attempts}
	}
	return restartDecision{}
}

// jittered spreads d by up to ±jitter of itself, within [0, max_delay], so
// that jobs failing together do not restart together.
func (r *restarts) jittered(d time.Duration) time.Duration {
	if r.p.jitter == 0 || d == 0 {
		return d
	}
	spread := float64(d) * r.p.jitter * (2*r.random() - 1)
	return min(max(d+time.Duration(spread), 0), r.p.maxDelay)
}

// RunWithRestarts runs the job until it ends, restarting it from its latest
// checkpoint (or from the start, without checkpoints) after a failure, as
// its restart strategy allows, and records each failure in the job's
// exception history. A job that cannot be restored fails at once.
func (j *Job) RunWithRestarts(ctx context.Context) error {
	strategy := newRestarts(NewRestartPolicy(j.Plan.Job.Restart))
	for restarted := 0; ; {
		var reconnects uint64
		if j.Env.NATS != nil {
			reconnects = j.Env.NATS.Reconnects()
		}
		started := time.Now()
		err := j.runOnce(ctx)
		if err == nil || ctx.Err() != nil {
			return err
		}
		now := time.Now()
		var restore *RestoreError
		if errors.As(err, &restore) {
			j.Exceptions.add(newException(now, err, ActionFail, 0, 0))
			return err
		}
		if j.natsLost(ctx, reconnects) {
			// A failure of NATS, not of the job: it pauses until NATS
			// is back, then goes on from its latest checkpoint.
			lost := fmt.Errorf("NATS connection lost: %w", err)
			j.Exceptions.add(newException(now, lost, ActionWaitForNATS, 0, 0))
			j.Observer.Restarting(restarted+1, 0, lost)
			j.Log.Warn("NATS connection lost: the job waits for it, then restarts from its latest checkpoint")
			if err := j.Env.NATS.WaitConnected(ctx); err != nil {
				return err
			}
			continue
		}
		d := strategy.failed(started, now)
		if !d.Restart {
			if restarted > 0 {
				err = fmt.Errorf("%w (after %d restarts)", err, restarted)
			}
			j.Exceptions.add(newException(now, err, ActionFail, 0, 0))
			return err
		}
		restarted++
		j.Exceptions.add(newException(now, err, ActionRestart, d.Attempt, d.Delay))
		j.Observer.Restarting(d.Attempt, d.Delay, err)
		select {
		case <-time.After(d.Delay):
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
