package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

// clusterSpreadJob is clusterSeqJob at parallelism 4 spread over the
// workers: its hash edge crosses workers.
const clusterSpreadJob = `
name: cluster-spread
parallelism: 4
placement: spread
checkpoint: {interval: 200ms, mode: exactly_once%s}
restart: {strategy: fixed_delay, delay: 100ms}
sources: [{id: in, jetstream: {stream: IN, subjects: ["in.0", "in.1", "in.2", "in.3"], bounded: true}}]
operators: [{id: track, input: in, key_by: {field: k}, process: {module: %s, function: track}}]
sinks: [{id: out, input: track, jetstream: {subject: out}, throttle: 1000}]
`

// spreadWorkers are the workers of a running job's subtasks other than its
// leader, from the job's info, waiting until it runs on several after at
// least restarts restarts.
func (tc *testCluster) spreadWorkers(job string, restarts int64) (leader string, others []string) {
	tc.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		info := tc.alive().job(job)
		others = others[:0]
		for _, v := range info.Vertices {
			for _, w := range v.Workers {
				if w != info.Worker && !slices.Contains(others, w) {
					others = append(others, w)
				}
			}
		}
		if info.State == runtime.StateRunning && len(others) > 0 && info.Restarts >= restarts {
			return info.Worker, others
		}
		if info.State.Terminal() || time.Now().After(deadline) {
			tc.t.Fatalf("job %s on %q, parts on %v: %s %s after %d restarts", job, info.Worker, others, info.State, info.Failure, info.Restarts)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// worker is the child of worker id "w<i+1>".
func (tc *testCluster) worker(id string) *child {
	for i, w := range tc.workers {
		if "w"+fmt.Sprint(i+1) == id {
			return w
		}
	}
	tc.t.Fatalf("no worker %s", id)
	return nil
}

// TestClusterSpreadKillNine: a keyed exactly-once job at parallelism 4
// spread over three workers on three NATS nodes; a worker running part of
// it (not its leader) is killed (kill -9) at random points, several times,
// each time restarted: the whole job restarts from its latest checkpoint on
// the live workers each time, and the output is exact: 0 lost, 0
// duplicated, per-key order kept. The unaligned case restores checkpoints
// whose in-flight data crossed workers.
func TestClusterSpreadKillNine(t *testing.T) {
	for _, tt := range []struct{ name, checkpoint string }{
		{"aligned", ""},
		{"unaligned", ", unaligned: true"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestCluster(t, 3, time.Second)
			js, closeNATS := tc.connect()
			defer closeNATS()
			const keys, perKey = 200, 100
			const total = keys * perKey
			seqInput(t, js, keys, perKey, 0)
			mod := tc.workers[0].upload(wasmbuild.UDF(t, "seqcheck"))
			job := tc.workers[0].submit(fmt.Sprintf(clusterSpreadJob, tt.checkpoint, mod.ID))
			const kills = 2
			// The visible output is no measure of the job's progress:
			// under backpressure the throttled sink's aligned
			// checkpoints, and so its commits, can lag the processing
			// by several seconds, and a late kill can restore a
			// checkpoint near the end, leaving the restarted run too
			// little time to be seen, let alone killed. So the first
			// kill comes once a tenth of the output is visible (a
			// checkpoint to restore), and a restarted run is killed
			// within half a second of its start, restoring or early.
			awaitOutput(t, js, total/10)
			for k := range kills {
				// Each kill is of a run placed after the kill before.
				leader, others := tc.spreadWorkers(job, int64(k))
				if k > 0 {
					time.Sleep(time.Duration(rand.IntN(500)) * time.Millisecond)
					leader, others = tc.spreadWorkers(job, int64(k))
				}
				w := tc.worker(others[0])
				at := subjectCount(t, js, "OUT", "out")
				w.kill()
				t.Logf("kill %d: %s, running part of the job led by %s, at %d outputs", k+1, others[0], leader, at)
				awaitOutput(t, js, subjectCount(t, js, "OUT", "out")+1)
				w.start()
			}
			tc.waitFinished(job)
			info := tc.alive().job(job)
			if info.Restarts < kills {
				t.Fatalf("%d restarts after %d kills", info.Restarts, kills)
			}
			checkSequences(t, readSubject(t, js, "OUT", "out"), keys, perKey)
		})
	}
}

// clusterWindowJob is a keyed tumbling count over four source filters,
// event time with watermarks, at the given parallelism and placement. The
// watermark's bound is wider than the input's span, so no record is late
// however the subtasks interleave the filters: the windows fire at the
// input's end, with the same results at any parallelism.
const clusterWindowJob = `
name: cluster-window-%[1]s
parallelism: %[2]d
placement: %[3]s
sources:
  - id: clicks
    jetstream: {stream: CLICKS, subjects: [c.0, c.1, c.2, c.3], bounded: true}
    timestamp: {field: ts}
    watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 1h}
operators:
  - id: count
    input: clicks
    key_by: {field: user}
    window: {type: tumbling, size: 10s}
    aggregate: {builtin: count}
sinks:
  - id: out
    input: count
    jetstream: {subject: %[1]s}
`

// TestClusterSpreadWindow: a keyed window job at parallelism 4 spread over
// three workers gives exactly the results of the same job in one subtask
// on one worker: every window of every key, with its timestamp.
func TestClusterSpreadWindow(t *testing.T) {
	tc := newTestCluster(t, 3, time.Second)
	js, closeNATS := tc.connect()
	defer closeNATS()
	ctx := context.Background()
	for _, s := range []jetstream.StreamConfig{
		{Name: "CLICKS", Subjects: []string{"c.>"}, Storage: jetstream.FileStorage, Replicas: 3},
		{Name: "WINDOWS", Subjects: []string{"one", "spread"}, Storage: jetstream.FileStorage, Replicas: 3},
	} {
		if _, err := js.CreateStream(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	var payloads [][]byte
	for i := range 8000 {
		c := windowClick{user: fmt.Sprintf("u%d", i%40), amount: i, ts: windowBase + int64(i)*25 - int64(i%7)*50}
		payloads = append(payloads, c.json())
	}
	publishAll(t, js, payloads, func(i int) string { return fmt.Sprintf("c.%d", i%4) })
	tc.waitFinished(tc.workers[0].submit(fmt.Sprintf(clusterWindowJob, "one", 1, "local")))
	spread := tc.workers[0].submit(fmt.Sprintf(clusterWindowJob, "spread", 4, "spread"))
	_, others := tc.spreadWorkers(spread, 0)
	tc.waitFinished(spread)
	results := func(subject string) []string {
		var out []string
		for _, m := range readStream(t, js, "WINDOWS", subject) {
			out = append(out, m.Headers().Get("Platform-Timestamp")+" "+string(m.Data()))
		}
		slices.Sort(out)
		return out
	}
	one, got := results("one"), results("spread")
	if len(one) == 0 || !slices.Equal(one, got) {
		t.Fatalf("spread over %v: %d results, one subtask %d:\n spread %v\n one %v", others, len(got), len(one), got, one)
	}
}
