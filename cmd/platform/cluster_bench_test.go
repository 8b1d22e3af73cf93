package main

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

// TestClusterBenchRelay measures the exactly-once relay of
// TestCheckpointBenchRelay (JetStream -> Wasm map -> JetStream, 1s
// checkpoints) on a platform in embedded mode and on one in cluster mode
// (an external NATS server, here in the same process, so that both count
// the same CPU: leases, fenced atomic-batch commits, checkpoints in the
// object store), three runs each, interleaved. docs/PERFORMANCE.md records
// the ratio.
func TestClusterBenchRelay(t *testing.T) {
	if !*clusterBench {
		t.Skip("a measurement: -cluster-bench runs it")
	}
	ctx := context.Background()
	embedded := startTestServer(t)
	srv := startStandaloneNATS(t)
	clustered := startTestServerWith(t, config{HTTPAddr: "127.0.0.1:0", DataDir: t.TempDir(), NATSURL: srv.ClientURL(),
		LogFormat: "text", LogLevel: "warn", CheckpointStore: "jetstream", NATSConnectTimeout: 5 * time.Second, NATSReplicas: 1,
		Cluster: clusterConfig{WorkerID: "w1", WorkerTimeout: 5 * time.Second}})
	n := *relayRecords
	wasm := wasmbuild.UDF(t, "upper-wat")
	platforms := []struct {
		name string
		ts   *testServer
		mod  string
	}{{"embedded", embedded, embedded.upload(wasm)}, {"cluster", clustered, clustered.upload(wasm)}}
	for _, p := range platforms {
		if _, err := p.ts.js.CreateStream(ctx, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in"}, Storage: jetstream.FileStorage}); err != nil {
			t.Fatal(err)
		}
		p.ts.publishMany("in", n, 100)
	}
	rates, cpuRates := map[string][]float64{}, map[string][]float64{}
	for i := range 3 {
		for _, p := range platforms {
			out := fmt.Sprintf("OUT_%d", i)
			subject := strings.ToLower(out)
			if _, err := p.ts.js.CreateStream(ctx, jetstream.StreamConfig{Name: out, Subjects: []string{subject}, Storage: jetstream.FileStorage}); err != nil {
				t.Fatal(err)
			}
			start, cpu := time.Now(), processCPUNanos()
			id := p.ts.submit(fmt.Sprintf(`
name: relay
buffer_timeout: -1ms
checkpoint: {interval: 1s, mode: exactly_once}
sources: [{id: in, jetstream: {stream: IN, bounded: true}}]
operators: [{id: up, input: in, map: {module: %s, function: upper}}]
sinks: [{id: out, input: up, jetstream: {subject: %s}}]
`, p.mod, subject))
			if info := p.ts.waitClosely(id); info.State != runtime.StateFinished {
				t.Fatalf("%s: job %s: %s", p.name, info.State, info.Failure)
			}
			rate := float64(n) / time.Since(start).Seconds()
			cpuRate := float64(n) / (float64(processCPUNanos()-cpu) / 1e9)
			rates[p.name] = append(rates[p.name], rate)
			cpuRates[p.name] = append(cpuRates[p.name], cpuRate)
			t.Logf("%s run %d: %.0f records/s, %.0f records per CPU second", p.name, i+1, rate, cpuRate)
			if got := len(readStream(t, p.ts.js, out, subject)); got != n {
				t.Fatalf("%s run %d: %s holds %d records, want %d", p.name, i+1, subject, got, n)
			}
			if err := p.ts.js.DeleteStream(ctx, out); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, r := range []struct {
		unit  string
		rates map[string][]float64
	}{{"records/s", rates}, {"records per CPU second", cpuRates}} {
		e, c := slices.Max(r.rates["embedded"]), slices.Max(r.rates["cluster"])
		t.Logf("best of 3, %s: embedded %.0f, cluster %.0f (%.3f of embedded)", r.unit, e, c, c/e)
	}
}

// startStandaloneNATS is one NATS server with JetStream, in the test's
// process, outside any cluster: the measurements' NATS.
func startStandaloneNATS(t *testing.T) *connector.Embedded {
	t.Helper()
	srv, err := connector.StartEmbedded(context.Background(), connector.EmbeddedConfig{DataDir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return srv
}

// TestClusterBenchFailover measures the time from kill -9 of the worker
// running an exactly-once job to the job's output resuming on another, with
// the default cluster.worker_timeout (5s) and with 1s, five kills each.
func TestClusterBenchFailover(t *testing.T) {
	if !*clusterBench {
		t.Skip("a measurement: -cluster-bench runs it")
	}
	for _, timeout := range []time.Duration{5 * time.Second, time.Second} {
		t.Run(timeout.String(), func(t *testing.T) {
			tc := newTestCluster(t, 3, timeout)
			js, closeNATS := tc.connect()
			defer closeNATS()
			const keys, perKey = 500, 400
			seqInput(t, js, keys, perKey, 0)
			mod := tc.workers[0].upload(wasmbuild.UDF(t, "seqcheck"))
			job := tc.workers[0].submit(fmt.Sprintf(clusterSeqJob, mod.ID))
			var took []time.Duration
			for k := range 5 {
				awaitOutput(t, js, uint64(keys*perKey)*uint64(k+1)/7)
				w := tc.owner(job)
				w.kill()
				killed := time.Now()
				tc.owner(job)
				awaitOutput(t, js, subjectCount(t, js, "OUT", "out")+1)
				took = append(took, time.Since(killed))
				w.start()
			}
			sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
			t.Logf("worker_timeout %s: kill -9 to output resuming, 5 kills: min %s, median %s, max %s", timeout,
				took[0].Round(10*time.Millisecond), took[2].Round(10*time.Millisecond), took[4].Round(10*time.Millisecond))
			tc.waitFinished(job)
			checkSequences(t, readSubject(t, js, "OUT", "out"), keys, perKey)
		})
	}
}
