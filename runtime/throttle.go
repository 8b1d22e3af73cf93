package runtime

import (
	"context"
	"time"

	"wasmstream.io/platform/abi"
)

// throttleStep is about how long the throttle lets records through at once:
// it passes a batch on in chunks of this much time's worth of records.
const throttleStep = 10 * time.Millisecond

// throttle is a sink's `throttle`: it passes records on at no more than its
// rate, sleeping between chunks, which makes the sink slow the way a slow
// external system would. Time it does not use is not saved up: after a pause
// the rate is still the limit. An extension of the spec for experiments.
type throttle struct {
	perRecord float64 // nanoseconds
	chunk     int
	due       time.Time
	timer     *time.Timer
	next      stage
}

// throttled puts a throttle of rate records per second, shared by
// parallelism subtasks, in front of next; rate 0 means none.
func throttled(rate, parallelism int, next stage) stage {
	if rate <= 0 {
		return next
	}
	perSecond := float64(rate) / float64(parallelism)
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &throttle{
		perRecord: 1e9 / perSecond,
		chunk:     max(int(perSecond*throttleStep.Seconds()), 1),
		timer:     t,
		next:      next,
	}
}

func (t *throttle) process(ctx context.Context, recs []abi.Record) error {
	for len(recs) > 0 {
		n := min(len(recs), t.chunk)
		if err := t.wait(ctx); err != nil {
			return err
		}
		if err := t.next.process(ctx, recs[:n]); err != nil {
			return err
		}
		t.due = t.due.Add(time.Duration(float64(n) * t.perRecord))
		recs = recs[n:]
	}
	return nil
}

// wait sleeps until the next chunk is due.
func (t *throttle) wait(ctx context.Context) error {
	now := time.Now()
	if !t.due.After(now) {
		t.due = now
		return nil
	}
	t.timer.Reset(t.due.Sub(now))
	select {
	case <-t.timer.C:
		return nil
	case <-ctx.Done():
		t.timer.Stop()
		return ctx.Err()
	}
}

func (t *throttle) advance(ctx context.Context, wm int64) error { return t.next.advance(ctx, wm) }
func (t *throttle) tick(ctx context.Context, now int64) error   { return t.next.tick(ctx, now) }
func (t *throttle) finish(ctx context.Context) error            { return t.next.finish(ctx) }

func (t *throttle) close(ctx context.Context) error {
	t.timer.Stop()
	return t.next.close(ctx)
}
