package runtime

import (
	"context"
	"testing"
	"time"

	"wasmstream.io/platform/checkpoint"
)

// TestAlignedCheckpointUnderBackpressure: two fast sources feed a throttled
// sink through the exchange, so every channel is full of buffers; an aligned
// checkpoint still completes and reports how long its barriers took to align.
func TestAlignedCheckpointUnderBackpressure(t *testing.T) {
	checkpointUnderBackpressure(t, "", func(s *checkpoint.Stats) bool { return s.Alignment > 0 })
}

// checkpointUnderBackpressure runs two fast sources into a sink throttled
// to 50,000 records/s, with checkpoints every 50ms (more of the checkpoint
// block in extra), until a completed checkpoint satisfies done, and returns
// it.
func checkpointUnderBackpressure(t *testing.T, extra string, done func(*checkpoint.Stats) bool) *checkpoint.Stats {
	t.Helper()
	m := newTestManager(t)
	info, err := m.SubmitJob(context.Background(), []byte(`
name: pressure
checkpoint: {interval: 50ms, mode: exactly_once`+extra+`}
sources: [{id: gen, parallelism: 2, generator: {kind: sequence}}]
sinks: [{id: out, input: gen, parallelism: 1, discard: true, throttle: 50000}]
`))
	if err != nil {
		t.Fatal(err)
	}
	var latest *checkpoint.Stats
	deadline := time.Now().Add(time.Minute)
	for latest == nil || !done(latest) {
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint as wanted completed in a minute: %+v", latest)
		}
		time.Sleep(20 * time.Millisecond)
		got, err := m.GetJob(context.Background(), info.ID)
		if err != nil {
			t.Fatal(err)
		}
		latest = got.Checkpoint.Latest
	}
	if _, err := m.CancelJob(context.Background(), info.ID); err != nil {
		t.Fatal(err)
	}
	return latest
}
