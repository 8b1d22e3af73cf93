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

// The same fresh keys with one side rare, as q7's windows' maxima joined
// with its bids: one left batch for 1,023 right ones, a left record
// meeting the right records of the 11 ms before it (about 1,100).
func BenchmarkJoinIntervalRareLeft(b *testing.B) {
	in := &operator.Inputs{Split: 1}
	j := newIntervalJoin("join", &plan.Join{Interval: true, Lower: -10, Upper: 0}, in, 1<<32, new(atomic.Int64), &operator.Out{Max: 1024, Next: &optest.Count{}}, nil)
	optest.Bench(b, j, 1_000_000, 100, func(n int) { in.From(min(n/1024%1024, 1)) })
}
