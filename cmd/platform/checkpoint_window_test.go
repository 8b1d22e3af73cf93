package main

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/runtime"
)

// windowJob counts events per user in 1s event-time windows, from stream
// WIN_IN to subject out.
func windowJob(out string) string {
	return fmt.Sprintf(`
name: windows
parallelism: 2
checkpoint: {interval: 100ms, mode: exactly_once}
restart: {strategy: fixed_delay, delay: 100ms}
sources:
  - id: in
    jetstream: {stream: WIN_IN, subjects: ["win.0", "win.1", "win.2", "win.3"], bounded: true}
    timestamp: {field: ts}
    watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 2s, interval: 0s}
operators:
  - id: per_user
    input: in
    key_by: {field: user}
    window: {type: tumbling, size: 1s}
    aggregate: {builtin: count}
sinks: [{id: out, input: per_user, jetstream: {subject: %s}}]
`, out)
}

// TestWindowJobRestoredMatchesUninterruptedRun runs the same event-time
// window job twice: once uninterrupted, and once with its sink's stream
// refusing writes half way, which fails the job over and over until the
// limit is lifted; each restart restores window contents from the latest
// checkpoint. Both runs give exactly the same results.
func TestWindowJobRestoredMatchesUninterruptedRun(t *testing.T) {
	ts := startTestServer(t)
	const n, users = 20000, 20
	payloads := make([][]byte, n)
	for i := range payloads {
		payloads[i] = fmt.Appendf(nil, `{"user":"u%d","ts":%d}`, i%users, 1_700_000_000_000+int64(i)*10)
	}
	ts.publishBy("WIN_IN", []string{"win.>"}, payloads, func(i int) string { return fmt.Sprintf("win.%d", i%users%4) })
	ctx := context.Background()
	ts.stream("WIN_A", []string{"win_a"}, nil)
	want := ts.wait(ts.submit(windowJob("win_a")))
	if want.State != runtime.StateFinished {
		t.Fatalf("uninterrupted run: %s %s", want.State, want.Failure)
	}
	expected := sortedPayloads(ts.read("WIN_A"))
	if len(expected) == 0 {
		t.Fatal("no windows fired")
	}
	if _, err := ts.js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "WIN_B", Subjects: []string{"win_b"}, MaxMsgs: int64(len(expected) / 2), Discard: jetstream.DiscardNew, Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
	id := ts.submit(windowJob("win_b"))
	ts.waitFor("a restart", func() bool { return ts.job(id).Restarts > 0 })
	if _, err := ts.js.UpdateStream(ctx, jetstream.StreamConfig{
		Name: "WIN_B", Subjects: []string{"win_b"}, MaxMsgs: -1, Discard: jetstream.DiscardNew, Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
	if info := ts.wait(id); info.State != runtime.StateFinished || info.Checkpoint.Restored == nil {
		t.Fatalf("restored run: %s %s %+v", info.State, info.Failure, info.Checkpoint)
	}
	got := sortedPayloads(ts.read("WIN_B"))
	if !slices.Equal(got, expected) {
		t.Fatalf("restored run: %d results, uninterrupted: %d; they differ", len(got), len(expected))
	}
}

func sortedPayloads(msgs []jetstream.Msg) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Data())
	}
	slices.Sort(out)
	return out
}
