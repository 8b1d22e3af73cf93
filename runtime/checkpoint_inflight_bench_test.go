package runtime

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/host"
)

// BenchmarkCheckpointUnderBackpressure times checkpoints of a job whose
// exchange is full (two sequence generators into a sink throttled to 50,000
// records/s), aligned and unaligned: one iteration is one completed
// checkpoint. It reports the mean checkpoint duration and in-flight bytes;
// docs/PERFORMANCE.md records the ratio.
func BenchmarkCheckpointUnderBackpressure(b *testing.B) {
	for _, mode := range []struct {
		name, checkpoint string
	}{
		{"aligned", "{interval: 100ms, mode: exactly_once}"},
		{"unaligned", "{interval: 100ms, mode: exactly_once, unaligned: true}"},
	} {
		b.Run(mode.name, func(b *testing.B) {
			ctx := context.Background()
			h, err := host.New(ctx, host.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = h.Close(ctx) })
			m, err := NewManager(ctx, Config{DataDir: b.TempDir(), Host: h, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = m.Close(ctx) })
			info, err := m.SubmitJob(ctx, []byte(`
name: pressure
checkpoint: `+mode.checkpoint+`
sources: [{id: gen, parallelism: 2, generator: {kind: sequence}}]
sinks: [{id: out, input: gen, parallelism: 1, discard: true, throttle: 50000}]
`))
			if err != nil {
				b.Fatal(err)
			}
			// The first checkpoint waits for the queues to fill.
			seen := nextCheckpoint(b, m, info.ID, 0).ID
			var took time.Duration
			var inFlight int64
			b.ResetTimer()
			for range b.N {
				s := nextCheckpoint(b, m, info.ID, seen)
				seen, took, inFlight = s.ID, took+s.Duration, inFlight+s.InFlight
			}
			b.StopTimer()
			b.ReportMetric(float64(took.Milliseconds())/float64(b.N), "ms/checkpoint")
			b.ReportMetric(float64(inFlight)/float64(b.N), "inflight-B/checkpoint")
			if _, err := m.CancelJob(ctx, info.ID); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// nextCheckpoint waits for a completed checkpoint after checkpoint after.
func nextCheckpoint(b *testing.B, m *Manager, job string, after int64) checkpoint.Stats {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		all, err := m.Checkpoints(context.Background(), job)
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range all {
			if s.ID > after && s.Status == checkpoint.StatusCompleted {
				return s
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.Fatalf("no checkpoint after %d completed in a minute", after)
	return checkpoint.Stats{}
}
