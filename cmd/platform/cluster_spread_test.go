package main

import (
	"fmt"
	"slices"
	"testing"
	"time"

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
sinks: [{id: out, input: track, jetstream: {subject: out}, throttle: 2000}]
`

// spreadWorkers are the workers of a running job's subtasks other than its
// leader, from the job's info, waiting until it runs on several.
func (tc *testCluster) spreadWorkers(job string) (leader string, others []string) {
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
		if info.State == runtime.StateRunning && len(others) > 0 {
			return info.Worker, others
		}
		if info.State.Terminal() || time.Now().After(deadline) {
			tc.t.Fatalf("job %s on %q, parts on %v: %s %s", job, info.Worker, others, info.State, info.Failure)
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
			for k := range kills {
				awaitOutput(t, js, total*uint64(k+1)/(kills+2))
				leader, others := tc.spreadWorkers(job)
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
