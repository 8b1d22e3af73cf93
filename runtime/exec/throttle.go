package exec

import (
	"context"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
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
	next      operator.Stage
}

// throttled puts a throttle of rate records per second, shared by
// parallelism subtasks, in front of next; rate 0 means none.
func throttled(rate, parallelism int, next operator.Stage) operator.Stage {
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

func (t *throttle) Process(ctx context.Context, recs []abi.Record) error {
	for len(recs) > 0 {
		n := min(len(recs), t.chunk)
		if err := t.wait(ctx); err != nil {
			return err
		}
		if err := t.next.Process(ctx, recs[:n]); err != nil {
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

func (t *throttle) Advance(ctx context.Context, wm int64) error { return t.next.Advance(ctx, wm) }
func (t *throttle) Tick(ctx context.Context, now int64) error   { return t.next.Tick(ctx, now) }
func (t *throttle) Finish(ctx context.Context) error            { return t.next.Finish(ctx) }

func (t *throttle) Close(ctx context.Context) error {
	t.timer.Stop()
	return t.next.Close(ctx)
}
