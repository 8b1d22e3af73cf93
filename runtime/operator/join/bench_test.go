package join

import (
	"sync/atomic"
	"testing"

	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
)

// Interval join +/- 5 s over 100,000 keys at 100 records per millisecond:
// each key has a record every second, so each record meets about 5 of the
// other side.
func BenchmarkJoinInterval(b *testing.B) {
	optest.JoinBench(b, 100_000, 100, func(out *operator.Out, in *operator.Inputs) operator.Stage {
		return newIntervalJoin("join", &plan.Join{Interval: true, Lower: -5000, Upper: 5000}, in, 1<<32, new(atomic.Int64), out, nil)
	})
}

// The same join over 1,000,000 keys: a key comes again only after its
// records expired, so that nearly every record buffers a key anew and
// nearly every prune forgets one, as q7's bids keyed by price do.
func BenchmarkJoinIntervalFreshKeys(b *testing.B) {
	optest.JoinBench(b, 1_000_000, 100, func(out *operator.Out, in *operator.Inputs) operator.Stage {
		return newIntervalJoin("join", &plan.Join{Interval: true, Lower: -5000, Upper: 5000}, in, 1<<32, new(atomic.Int64), out, nil)
	})
}
