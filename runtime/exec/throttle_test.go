package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
)

// chunkSink records the size of every batch it gets.
type chunkSink struct {
	optest.Values
	sizes []int
}

func (c *chunkSink) Process(ctx context.Context, recs []abi.Record) error {
	c.sizes = append(c.sizes, len(recs))
	return c.Values.Process(ctx, recs)
}

func TestThrottlePassesRecordsInChunks(t *testing.T) {
	tests := []struct {
		rate, parallelism, records int
		sizes                      []int
	}{
		// 1000/s in one subtask: 10 records per 10 ms.
		{rate: 1000, parallelism: 1, records: 25, sizes: []int{10, 10, 5}},
		// 1000/s shared by 4 subtasks: 250/s each, 2 per 10 ms.
		{rate: 1000, parallelism: 4, records: 5, sizes: []int{2, 2, 1}},
		// Below one record per 10 ms a chunk is one record.
		{rate: 50, parallelism: 1, records: 2, sizes: []int{1, 1}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d/s over %d", tt.rate, tt.parallelism), func(t *testing.T) {
			sink := &chunkSink{}
			s := throttled(tt.rate, tt.parallelism, sink)
			recs := make([]abi.Record, tt.records)
			var want []string
			for i := range recs {
				recs[i].Value = fmt.Appendf(nil, "r%d", i)
				want = append(want, string(recs[i].Value))
			}
			if err := s.Process(context.Background(), recs); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sink.sizes, tt.sizes) || !slices.Equal(sink.Values.Values, want) {
				t.Fatalf("chunks %v of %q; want %v of %q", sink.sizes, sink.Values.Values, tt.sizes, want)
			}
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestThrottleStopsWaitingWhenCancelled(t *testing.T) {
	s := throttled(1, 1, &chunkSink{})
	ctx, cancel := context.WithCancel(context.Background())
	recs := make([]abi.Record, 2)
	cancel()
	// The first record is due at once; the second would be a second later.
	if err := s.Process(ctx, recs); !errors.Is(err, context.Canceled) {
		t.Fatalf("process: %v, want context.Canceled", err)
	}
}

func TestNoThrottle(t *testing.T) {
	sink := &chunkSink{}
	if s := throttled(0, 1, sink); s != operator.Stage(sink) {
		t.Fatalf("throttle 0 wraps the sink in %T", s)
	}
}
