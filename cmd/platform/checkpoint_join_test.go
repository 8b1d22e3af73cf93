package main

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/runtime"
)

// joinEvents makes n events of 20 users in time order from start, at most
// step apart, with their payloads.
func joinEvents(rng *rand.Rand, n int, start, step int64) ([]joinEvent, [][]byte) {
	evs := make([]joinEvent, 0, n)
	payloads := make([][]byte, 0, n)
	at := start
	for range n {
		at += rng.Int63n(step)
		e := joinEvent{user: fmt.Sprintf("u%d", rng.Intn(20)), ad: rng.Intn(100), ts: at}
		evs = append(evs, e)
		payloads = append(payloads, e.json())
	}
	return evs, payloads
}

// attributions are the pairs an interval join of imps (left) and clicks
// (right) on user with bounds 0 and +5 s outputs, sorted.
func attributions(imps, clicks []joinEvent) []string {
	var out []string
	for _, imp := range imps {
		for _, c := range clicks {
			if c.user == imp.user && c.ts >= imp.ts && c.ts <= imp.ts+5000 {
				out = append(out, fmt.Sprintf(`{"key":%q,"left":%s,"right":%s}`, imp.user, imp.json(), c.json()))
			}
		}
	}
	slices.Sort(out)
	return out
}

// attributionJob joins streams JIMPS and JCLICKS, each read as four subject
// filters, into subject out.
func attributionJob(parallelism int, bounded bool, out, sinkExtra string) string {
	return fmt.Sprintf(`
name: attribution
parallelism: %d
checkpoint: {interval: 100ms, mode: exactly_once}
restart: {strategy: fixed_delay, delay: 100ms}
sources:
  - id: imps
    jetstream: {stream: JIMPS, subjects: ["imps.0", "imps.1", "imps.2", "imps.3"], bounded: %t}
    timestamp: {field: ts}
    watermark: {strategy: monotonous, interval: 0s}
  - id: clicks
    jetstream: {stream: JCLICKS, subjects: ["clicks.0", "clicks.1", "clicks.2", "clicks.3"], bounded: %t}
    timestamp: {field: ts}
    watermark: {strategy: monotonous, interval: 0s}
operators:
  - id: attribute
    join:
      left: {input: imps, key_by: {field: user}}
      right: {input: clicks, key_by: {field: user}}
      interval: {lower: 0s, upper: 5s}
sinks: [{id: out, input: attribute, jetstream: {subject: %s}%s}]
`, parallelism, bounded, bounded, out, sinkExtra)
}

// publishJoinEvents publishes events to subject prefix.<user mod 4>, so
// that each subject filter is in time order.
func (ts *testServer) publishJoinEvents(prefix string, evs []joinEvent, payloads [][]byte) {
	ts.t.Helper()
	publishAll(ts.t, ts.js, payloads, func(i int) string {
		var u int
		fmt.Sscanf(evs[i].user, "u%d", &u)
		return fmt.Sprintf("%s.%d", prefix, u%4)
	})
}

// TestIntervalJoinRestoredMatchesUninterruptedRun runs the same interval
// join twice: once uninterrupted, and once with its sink's stream refusing
// writes half way, which fails the job over and over until the limit is
// lifted; each restart restores both sides' buffers, the join's watermark
// and the sources' watermark generators from the latest checkpoint. Both
// runs give exactly the pairs a nested loop finds.
func TestIntervalJoinRestoredMatchesUninterruptedRun(t *testing.T) {
	ts := startTestServer(t)
	rng := rand.New(rand.NewSource(5))
	imps, impPayloads := joinEvents(rng, 8000, windowBase, 40)
	clicks, clickPayloads := joinEvents(rng, 3000, windowBase, 110)
	ts.stream("JIMPS", []string{"imps.>"}, nil)
	ts.stream("JCLICKS", []string{"clicks.>"}, nil)
	ts.publishJoinEvents("imps", imps, impPayloads)
	ts.publishJoinEvents("clicks", clicks, clickPayloads)
	want := attributions(imps, clicks)
	if len(want) < 5000 {
		t.Fatalf("only %d expected pairs: the test data is too sparse", len(want))
	}
	// The throttle makes the run last many checkpoint intervals.
	const throttle = ", throttle: 20000"
	ts.stream("JOINED_A", []string{"joined_a"}, nil)
	if info := ts.wait(ts.submit(attributionJob(2, true, "joined_a", throttle))); info.State != runtime.StateFinished {
		t.Fatalf("uninterrupted run: %s %s", info.State, info.Failure)
	}
	if got := sortedPayloads(ts.read("JOINED_A")); !slices.Equal(got, want) {
		t.Fatalf("uninterrupted run: %d pairs, want %d; they differ", len(got), len(want))
	}
	ctx := context.Background()
	if _, err := ts.js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "JOINED_B", Subjects: []string{"joined_b"}, MaxMsgs: int64(len(want) / 2), Discard: jetstream.DiscardNew, Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
	id := ts.submit(attributionJob(2, true, "joined_b", throttle))
	ts.waitFor("a restart", func() bool { return ts.job(id).Restarts > 0 })
	if _, err := ts.js.UpdateStream(ctx, jetstream.StreamConfig{
		Name: "JOINED_B", Subjects: []string{"joined_b"}, MaxMsgs: -1, Discard: jetstream.DiscardNew, Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
	info := ts.wait(id)
	if info.State != runtime.StateFinished || info.Checkpoint.Restored == nil {
		t.Fatalf("restored run: %s %s %+v", info.State, info.Failure, info.Checkpoint)
	}
	if got := sortedPayloads(ts.read("JOINED_B")); !slices.Equal(got, want) {
		t.Fatalf("restored run: %d pairs, want %d; they differ", len(got), len(want))
	}
	for _, v := range info.Vertices {
		if v.ID == "attribute" && v.LateRecords != 0 {
			t.Fatalf("restored run: %d late records, want none", v.LateRecords)
		}
	}
}

// TestIntervalJoinSavepointRescale runs an interval join at parallelism 2,
// stops it with a savepoint, and continues from each savepoint at
// parallelism 3, then 1, with new input each time that joins with the
// input before it. Each buffered record follows its key to its new subtask
// exactly once: the output is exactly the pairs of all the input, none
// missing and none twice.
func TestIntervalJoinSavepointRescale(t *testing.T) {
	ts := startTestServer(t)
	rng := rand.New(rand.NewSource(8))
	ts.stream("JIMPS", []string{"imps.>"}, nil)
	ts.stream("JCLICKS", []string{"clicks.>"}, nil)
	ts.stream("JOINED", []string{"joined"}, nil)
	var imps, clicks []joinEvent
	savepoint := ""
	for stage, p := range []int{2, 3, 1} {
		start := int64(windowBase)
		if stage > 0 {
			start = max(imps[len(imps)-1].ts, clicks[len(clicks)-1].ts)
		}
		newImps, impPayloads := joinEvents(rng, 1500, start, 80)
		newClicks, clickPayloads := joinEvents(rng, 500, start, 240)
		ts.publishJoinEvents("imps", newImps, impPayloads)
		ts.publishJoinEvents("clicks", newClicks, clickPayloads)
		imps, clicks = append(imps, newImps...), append(clicks, newClicks...)
		var job string
		if savepoint == "" {
			job = ts.submit(attributionJob(p, false, "joined", ""))
		} else {
			job = ts.submitFrom(attributionJob(p, false, "joined", ""), savepoint)
		}
		want := len(attributions(imps, clicks))
		ts.waitFor(fmt.Sprintf("%d pairs at parallelism %d", want, p), func() bool { return len(ts.read("JOINED")) >= want })
		savepoint = ts.stopWithSavepoint(job)
	}
	want := attributions(imps, clicks)
	got := sortedPayloads(ts.read("JOINED"))
	if !slices.Equal(got, want) {
		t.Fatalf("%d pairs, want %d; they differ", len(got), len(want))
	}
}
