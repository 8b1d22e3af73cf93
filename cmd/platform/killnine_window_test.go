package main

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/runtime"
)

// TestKillNineWindowJob runs an event-time window job (counts per user in
// 1 s tumbling windows, exactly-once, checkpointed) twice in a separate
// platform process: once uninterrupted, and once while SIGKILLing the
// process at five random points of its progress and restarting it on the
// same data directory. Both runs give exactly the same results.
func TestKillNineWindowJob(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills platform processes")
	}
	c, js, closeNATS := startChild(t)
	const n, users = 400_000, 20
	createStreams(t, js,
		jetstream.StreamConfig{Name: "WIN_IN", Subjects: []string{"win.>"}, Storage: jetstream.FileStorage},
		jetstream.StreamConfig{Name: "WIN_A", Subjects: []string{"win_a"}, Storage: jetstream.FileStorage},
		jetstream.StreamConfig{Name: "WIN_B", Subjects: []string{"win_b"}, Storage: jetstream.FileStorage},
	)
	payloads := make([][]byte, n)
	for i := range payloads {
		payloads[i] = fmt.Appendf(nil, `{"user":"u%d","ts":%d}`, i%users, 1_700_000_000_000+int64(i)*10)
	}
	publishAll(t, js, payloads, func(i int) string { return fmt.Sprintf("win.%d", i%users%4) })
	submit := func(out string) string { return c.submit(windowJob(out)) }
	uninterrupted := submit("win_a")
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		info := c.job(uninterrupted)
		if info.State == runtime.StateFinished {
			break
		}
		if info.State.Terminal() || time.Now().After(deadline) {
			t.Fatalf("uninterrupted run: %s %s", info.State, info.Failure)
		}
	}
	ts := &testServer{t: t, js: js}
	expected := sortedPayloads(ts.read("WIN_A"))
	if want := n / 100 * users; len(expected) != want {
		t.Fatalf("uninterrupted run: %d results, want %d (one per user and second)", len(expected), want)
	}
	js, closeNATS = c.killAtRandom(submit("win_b"), "WIN_B", uint64(len(expected)), 5, js, closeNATS)
	defer closeNATS()
	ts.js = js
	got := sortedPayloads(ts.read("WIN_B"))
	if !slices.Equal(got, expected) {
		t.Fatalf("killed run: %d results, uninterrupted: %d; they differ", len(got), len(expected))
	}
}
