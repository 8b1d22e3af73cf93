package exec

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
)

func TestDurationHistogram(t *testing.T) {
	tests := []struct {
		name    string
		observe []time.Duration
		count   uint64
		sum     float64
		// cumulative counts at some bounds
		at map[float64]uint64
	}{
		{name: "empty", at: map[float64]uint64{1e-6: 0, 10: 0}},
		{name: "on and between bounds",
			observe: []time.Duration{time.Microsecond, 2 * time.Microsecond, 3 * time.Microsecond, time.Millisecond},
			count:   4, sum: 1.006e-3,
			at: map[float64]uint64{1e-6: 1, 2.5e-6: 2, 5e-6: 3, 5e-4: 3, 1e-3: 4, 10: 4}},
		{name: "above the last bound", observe: []time.Duration{time.Minute}, count: 1, sum: 60,
			at: map[float64]uint64{10: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h durationHistogram
			for _, d := range tt.observe {
				h.observe(d)
			}
			count, sum, buckets := h.snapshot()
			if count != tt.count || sum != tt.sum || len(buckets) != len(callBuckets) {
				t.Fatalf("count %d, sum %g, %d buckets; want %d, %g, %d", count, sum, len(buckets), tt.count, tt.sum, len(callBuckets))
			}
			for bound, want := range tt.at {
				if buckets[bound] != want {
					t.Errorf("bucket %g: %d, want %d", bound, buckets[bound], want)
				}
			}
		})
	}
}

// TestMeteredPoolCountsCallsAndFailures runs faulty-wat's functions through
// a metered pool: a good call, a trap and a call past its deadline.
func TestMeteredPoolCountsCallsAndFailures(t *testing.T) {
	mod, err := optest.Host(t).Compile(context.Background(), wasmbuild.UDF(t, "faulty-wat"))
	if err != nil {
		t.Fatal(err)
	}
	var stats taskStats
	p := stats.meter("m", "poison", mod.NewGuest(host.InstanceConfig{CallTimeout: 100 * time.Millisecond}))
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	frame := func(value string) []byte {
		return abi.AppendRecord(abi.AppendInputHeader(nil, 1), &abi.Record{Value: []byte(value)})
	}
	calls := []struct {
		function, value string
		kind            host.ErrorKind
	}{
		{"poison", "fine", ""},
		{"poison", "poison", host.KindTrap},
		{"spin", "spin", host.KindDeadline},
	}
	for _, c := range calls {
		_, err := p.Call(context.Background(), mod.Description.Lookup(c.function), frame(c.value))
		var ce *host.CallError
		if got := errors.As(err, &ce); got != (c.kind != "") || got && ce.Kind != c.kind {
			t.Fatalf("%s(%q): %v, want kind %q", c.function, c.value, err, c.kind)
		}
	}
	var traps []int64
	for i := range p.traps {
		traps = append(traps, p.traps[i].Load())
	}
	if want := []int64{1, 1, 0, 0, 0}; !slices.Equal(traps, want) {
		t.Errorf("traps by kind %v = %v, want %v", TrapKinds, traps, want)
	}
	if count, _, _ := p.calls.snapshot(); count != 3 {
		t.Errorf("%d calls observed, want 3", count)
	}
	if n := p.pool.Instantiations(); n != 2 {
		t.Errorf("%d instances, want 2 (the trap discards the first)", n)
	}
	if len(stats.pools) != 1 || stats.pools[0] != p {
		t.Errorf("the task's pools are %v", stats.pools)
	}
}

// TestMeteringDoesNotAllocate checks the per-batch cost of the metrics: the
// vertex entry's count and clock, and the timing of a call into a module.
func TestMeteringDoesNotAllocate(t *testing.T) {
	mod, err := optest.Host(t).Compile(context.Background(), wasmbuild.UDF(t, "upper-wat"))
	if err != nil {
		t.Fatal(err)
	}
	var stats taskStats
	p := stats.meter("up", "upper", mod.NewGuest(host.InstanceConfig{}))
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	frame := abi.AppendRecord(abi.AppendInputHeader(nil, 1), &abi.Record{Value: []byte("abc")})
	fn := mod.Description.Lookup("upper")
	ctx := context.Background()
	if _, err := p.Call(ctx, fn, frame); err != nil {
		t.Fatal(err)
	}
	c := &Counters{}
	m := &inMeter{c: c, next: operator.Discard{}}
	recs := make([]abi.Record, 64)
	tests := []struct {
		name string
		f    func()
	}{
		{"inMeter.process", func() { _ = m.Process(ctx, recs) }},
		{"meteredPool.Call", func() { _, _ = p.Call(ctx, fn, frame) }},
	}
	for _, tt := range tests {
		if n := testing.AllocsPerRun(100, tt.f); n != 0 {
			t.Errorf("%s: %g allocations per batch, want 0", tt.name, n)
		}
	}
	if got := c.In.Load(); got != 101*64 {
		t.Errorf("counted %d records in, want %d", got, 101*64)
	}
}
