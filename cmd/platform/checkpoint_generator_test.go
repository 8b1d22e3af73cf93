package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/runtime"
)

// generatorJob writes count records of a sequence generator to subject out,
// throttled so that the run lasts several checkpoint intervals.
func generatorJob(parallelism, rate int, count int64, out string) string {
	return fmt.Sprintf(`
name: sequence
parallelism: %d
checkpoint: {interval: 100ms, mode: exactly_once}
restart: {strategy: fixed_delay, delay: 100ms}
sources: [{id: gen, generator: {kind: sequence, count: %d, rate: %d}}]
sinks: [{id: out, input: gen, throttle: 20000, jetstream: {subject: %s}}]
`, parallelism, count, rate, out)
}

// checkSequenceOnce checks that the messages hold every sequence number
// below count exactly once.
func checkSequenceOnce(t *testing.T, msgs []jetstream.Msg, count int64) {
	t.Helper()
	seen := make([]int, count)
	for _, m := range msgs {
		var r struct{ Seq int64 }
		if err := json.Unmarshal(m.Data(), &r); err != nil || r.Seq < 0 || r.Seq >= count {
			t.Fatalf("output %q: %v", m.Data(), err)
		}
		seen[r.Seq]++
	}
	for n, c := range seen {
		if c != 1 {
			t.Fatalf("sequence %d output %d times (%d outputs, want %d)", n, c, len(msgs), count)
		}
	}
}

// TestGeneratorRestoredOutputsEachRecordOnce fails a generator job half way
// (its sink's stream refuses writes until the limit is lifted): restored
// from its checkpoints, the generator resumes where they say, and the
// output holds each record exactly once.
func TestGeneratorRestoredOutputsEachRecordOnce(t *testing.T) {
	ts := startTestServer(t)
	const count = 20000
	ctx := context.Background()
	if _, err := ts.js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "GEN_OUT", Subjects: []string{"gen_out"}, MaxMsgs: count / 2, Discard: jetstream.DiscardNew, Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
	id := ts.submit(generatorJob(2, 0, count, "gen_out"))
	ts.waitFor("a restart", func() bool { return ts.job(id).Restarts > 0 })
	if _, err := ts.js.UpdateStream(ctx, jetstream.StreamConfig{
		Name: "GEN_OUT", Subjects: []string{"gen_out"}, MaxMsgs: -1, Discard: jetstream.DiscardNew, Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
	if info := ts.wait(id); info.State != runtime.StateFinished || info.Checkpoint.Restored == nil {
		t.Fatalf("restored run: %s %s %+v", info.State, info.Failure, info.Checkpoint)
	}
	checkSequenceOnce(t, ts.read("GEN_OUT"), count)
}

// TestGeneratorSavepointRescale stops an endless rate-limited generator job
// with a savepoint and continues it at parallelism 3, then 1. The
// generator's 128 splits (the job's max_parallelism) keep their positions
// across parallelisms: the output holds each record at most once, and each
// split's records are a gapless run from its first index.
func TestGeneratorSavepointRescale(t *testing.T) {
	ts := startTestServer(t)
	const splits, perStage = 128, 1500
	ts.stream("GEN_OUT", []string{"gen_out"}, nil)
	savepoint := ""
	for stage, p := range []int{2, 3, 1} {
		var job string
		if savepoint == "" {
			job = ts.submit(generatorJob(p, 2000, 0, "gen_out"))
		} else {
			job = ts.submitFrom(generatorJob(p, 2000, 0, "gen_out"), savepoint)
		}
		want := (stage + 1) * perStage
		ts.waitFor(fmt.Sprintf("%d outputs at parallelism %d", want, p), func() bool { return len(ts.read("GEN_OUT")) >= want })
		savepoint = ts.stopWithSavepoint(job)
	}
	next := make([]int64, splits)
	for s := range next {
		next[s] = int64(s)
	}
	seen, last := map[int64]bool{}, int64(0)
	for _, m := range ts.read("GEN_OUT") {
		var r struct{ Seq int64 }
		if err := json.Unmarshal(m.Data(), &r); err != nil {
			t.Fatalf("output %q: %v", m.Data(), err)
		}
		if seen[r.Seq] {
			t.Fatalf("sequence %d output twice", r.Seq)
		}
		seen[r.Seq], last = true, max(last, r.Seq)
	}
	for n := range last + 1 {
		s := n % splits
		if seen[n] && n != next[s] {
			t.Fatalf("split %d: sequence %d output, but not %d before it", s, n, next[s])
		}
		if seen[n] {
			next[s] = n + splits
		}
	}
	if len(seen) < 3*perStage {
		t.Fatalf("%d outputs, want at least %d", len(seen), 3*perStage)
	}
}
