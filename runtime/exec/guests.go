package exec

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"time"

	"wasmstream.io/platform/host"
)

// callBuckets are the upper bounds, in seconds, of the UDF call duration
// histogram: 1-2.5-5 steps from 1 µs to 10 s (the default call timeout).
var callBuckets = [...]float64{
	1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4,
	1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
}

// callBucketNanos are callBuckets in nanoseconds, for observe.
var callBucketNanos = func() []int64 {
	ns := make([]int64, len(callBuckets))
	for i, b := range callBuckets {
		ns[i] = int64(b * 1e9)
	}
	return ns
}()

// durationHistogram is a fixed-bucket histogram of durations that one
// goroutine observes and any goroutine reads, without locks or allocations.
type durationHistogram struct {
	// counts[i] counts the observations in bucket i (not cumulative); the
	// last is above every bound.
	counts [len(callBuckets) + 1]atomic.Uint64
	sum    atomic.Int64
}

func (h *durationHistogram) observe(d time.Duration) {
	n := int64(d)
	i, _ := slices.BinarySearch(callBucketNanos, n)
	h.counts[i].Add(1)
	h.sum.Add(n)
}

// snapshot returns the observation count, the sum in seconds and the
// cumulative count of each bucket by upper bound.
func (h *durationHistogram) snapshot() (count uint64, sum float64, buckets map[float64]uint64) {
	buckets = make(map[float64]uint64, len(callBuckets))
	for i, b := range callBuckets {
		count += h.counts[i].Load()
		buckets[b] = count
	}
	count += h.counts[len(callBuckets)].Load()
	return count, float64(h.sum.Load()) / 1e9, buckets
}

// TrapKinds are the kinds of host.CallError, in the order of
// meteredPool.traps.
var TrapKinds = [...]host.ErrorKind{host.KindTrap, host.KindDeadline, host.KindMemoryLimit, host.KindExit, host.KindBadOutput}

// meteredPool is a task's host.Guest with its figures: the duration of every
// call and the calls that failed inside the guest, by kind. Like the pool, it
// belongs to the task's goroutine; its figures may be read from any.
type meteredPool struct {
	pool     *host.Guest
	vertex   string
	function string
	calls    durationHistogram
	traps    [len(TrapKinds)]atomic.Int64
}

// meter wraps a pool that runs function for vertex in this task, so that
// the metrics see its calls.
func (s *taskStats) meter(vertex, function string, pool *host.Guest) *meteredPool {
	p := &meteredPool{pool: pool, vertex: vertex, function: function}
	s.pools = append(s.pools, p)
	return p
}

// Call runs the pool's Call and records its duration and failure kind: one
// clock reading before and after each call, which carries a whole batch.
func (p *meteredPool) Call(ctx context.Context, fn int, frame []byte) ([]byte, error) {
	return p.CallWith(ctx, fn, frame, nil)
}

// CallWith is Call for a keyed function, whose state and timer imports act
// on env.
func (p *meteredPool) CallWith(ctx context.Context, fn int, frame []byte, env host.Env) ([]byte, error) {
	start := time.Now()
	out, err := p.pool.CallWith(ctx, fn, frame, env)
	p.calls.observe(time.Since(start))
	if err != nil {
		var ce *host.CallError
		if errors.As(err, &ce) {
			for i, k := range TrapKinds {
				if k == ce.Kind {
					p.traps[i].Add(1)
				}
			}
		}
	}
	return out, err
}

// Close closes the pool.
func (p *meteredPool) Close(ctx context.Context) error { return p.pool.Close(ctx) }
