package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

// publishMany publishes n payloads of size bytes to subject, waiting for
// acknowledgements every 2,000 (the client stalls past 4,000 outstanding).
func (ts *testServer) publishMany(subject string, n, size int) {
	ts.t.Helper()
	payload := []byte(strings.Repeat("x", size))
	for i := 0; i < n; i++ {
		if _, err := ts.js.PublishAsync(subject, payload); err != nil {
			ts.t.Fatal(err)
		}
		if i%2000 == 1999 || i == n-1 {
			<-ts.js.PublishAsyncComplete()
		}
	}
}

// checkpointBench runs the checkpoint measurements, which take minutes:
// go test ./cmd/platform -run CheckpointBench -checkpoint-bench -v
var checkpointBench = flag.Bool("checkpoint-bench", false, "run the checkpoint measurements of docs/PERFORMANCE.md")

// relayRecords is the input of the relay measurement: at the default, the
// whole input is read before the first 1s checkpoint, so exactly-once
// commits it all at the end; 1,500,000 measures the steady state, where
// each checkpoint's commit overlaps the reading of the next epoch.
var relayRecords = flag.Int("relay-records", 300_000, "records the relay measurement moves")

// TestCheckpointBenchRelay measures JetStream -> Wasm map -> JetStream over
// -relay-records records of 100 bytes, one chained task: without checkpoints, with
// 1s at_least_once checkpoints, with 1s exactly_once checkpoints (the
// transactional sink) and, outside the platform, a naive relay doing the same
// with JetStream's client; three runs each, interleaved. Every run must leave
// exactly that many messages in its output stream. It logs records per wall
// second and per CPU second of the process; docs/PERFORMANCE.md records the
// ratios.
func TestCheckpointBenchRelay(t *testing.T) {
	if !*checkpointBench {
		t.Skip("a measurement: -checkpoint-bench runs it")
	}
	ts := startTestServer(t)
	mod := ts.upload(wasmbuild.UDF(t, "upper-wat"))
	n := *relayRecords
	ctx := context.Background()
	if _, err := ts.js.CreateStream(ctx, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	ts.publishMany("in", n, 100)
	modes := []struct{ name, checkpoint string }{
		{"none", ""},
		{"at_least_once_1s", "checkpoint: {interval: 1s, mode: at_least_once}"},
		{"exactly_once_1s", "checkpoint: {interval: 1s, mode: exactly_once}"},
		{"naive_relay", ""},
	}
	// rates are records per wall second, cpuRates records per CPU second
	// of the whole process.
	rates, cpuRates := map[string][]float64{}, map[string][]float64{}
	for i := 0; i < 3; i++ {
		for _, mode := range modes {
			out := fmt.Sprintf("OUT_%s_%d", strings.ToUpper(mode.name), i)
			subject := strings.ToLower(out)
			if _, err := ts.js.CreateStream(ctx, jetstream.StreamConfig{Name: out, Subjects: []string{subject}, Storage: jetstream.FileStorage}); err != nil {
				t.Fatal(err)
			}
			start, cpu := time.Now(), processCPUNanos()
			if mode.name == "naive_relay" {
				ts.naiveRelay("IN", subject, n)
			} else {
				id := ts.submit(fmt.Sprintf(`
name: relay
buffer_timeout: -1ms
%s
sources: [{id: in, jetstream: {stream: IN, bounded: true}}]
operators: [{id: up, input: in, map: {module: %s, function: upper}}]
sinks: [{id: out, input: up, jetstream: {subject: %s}}]
`, mode.checkpoint, mod, subject))
				if info := ts.waitClosely(id); info.State != runtime.StateFinished {
					t.Fatalf("job %s: %s", info.State, info.Failure)
				}
			}
			rate := float64(n) / time.Since(start).Seconds()
			cpuRate := float64(n) / (float64(processCPUNanos()-cpu) / 1e9)
			rates[mode.name] = append(rates[mode.name], rate)
			cpuRates[mode.name] = append(cpuRates[mode.name], cpuRate)
			t.Logf("%s run %d: %.0f records/s, %.0f records per CPU second", mode.name, i+1, rate, cpuRate)
			st, err := ts.js.Stream(ctx, out)
			if err != nil {
				t.Fatal(err)
			}
			if info, err := st.Info(ctx); err != nil || info.State.Msgs != uint64(n) {
				t.Fatalf("%s run %d: stream %s holds %+v messages, want %d (%v)", mode.name, i+1, out, info, n, err)
			}
			if err := ts.js.DeleteStream(ctx, out); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, r := range []struct {
		unit  string
		rates map[string][]float64
	}{{"records/s", rates}, {"records per CPU second", cpuRates}} {
		best := map[string]float64{}
		for name, rs := range r.rates {
			best[name] = slices.Max(rs)
		}
		t.Logf("best of 3, %s: none %.0f, at_least_once 1s %.0f (%.3f of none), exactly_once 1s %.0f (%.3f of at_least_once, %.3f of the naive relay), naive relay %.0f",
			r.unit, best["none"], best["at_least_once_1s"], best["at_least_once_1s"]/best["none"],
			best["exactly_once_1s"], best["exactly_once_1s"]/best["at_least_once_1s"], best["exactly_once_1s"]/best["naive_relay"],
			best["naive_relay"])
	}
}

// waitClosely polls a job every 5ms until it reaches a terminal state: the
// harness's wait polls every 50ms, which would add up to 2.5% to a two-second
// run and none to the naive relay, timed without polling.
func (ts *testServer) waitClosely(id string) runtime.JobInfo {
	ts.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var job runtime.JobInfo
		status, body := ts.call(http.MethodGet, "/v1/jobs/"+id, "", nil)
		if status != http.StatusOK {
			ts.t.Fatalf("get job: %d %s", status, body)
		}
		if err := json.Unmarshal(body, &job); err != nil {
			ts.t.Fatal(err)
		}
		if job.State.Terminal() {
			return job
		}
		if time.Now().After(deadline) {
			ts.t.Fatalf("job %s still %s after 3 minutes", id, job.State)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// naiveRelay copies the first n messages of stream in to subject, upper-cased
// as the upper-wat map does, the plain way with JetStream's client on a
// connection of its own: fetch a batch, publish each message async with a
// Nats-Msg-Id (its input sequence), wait for the publishes, acknowledge each
// input message.
func (ts *testServer) naiveRelay(in, subject string, n int) {
	ts.t.Helper()
	ctx := context.Background()
	nc, js, err := connector.Connect(ctx, ts.s.nc.ConnectedUrl(), "naive-relay")
	if err != nil {
		ts.t.Fatal(err)
	}
	defer nc.Close()
	cons, err := js.CreateConsumer(ctx, in, jetstream.ConsumerConfig{AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		ts.t.Fatal(err)
	}
	defer func() { _ = js.DeleteConsumer(ctx, in, cons.CachedInfo().Name) }()
	msgs := make([]jetstream.Msg, 0, 1000)
	for copied := 0; copied < n; {
		batch, err := cons.Fetch(min(1000, n-copied))
		if err != nil {
			ts.t.Fatal(err)
		}
		msgs = msgs[:0]
		for m := range batch.Messages() {
			meta, err := m.Metadata()
			if err != nil {
				ts.t.Fatal(err)
			}
			out := nats.NewMsg(subject)
			out.Data = bytes.ToUpper(m.Data())
			out.Header.Set(nats.MsgIdHdr, strconv.FormatUint(meta.Sequence.Stream, 10))
			if _, err := js.PublishMsgAsync(out); err != nil {
				ts.t.Fatal(err)
			}
			msgs = append(msgs, m)
		}
		if err := batch.Error(); err != nil {
			ts.t.Fatal(err)
		}
		<-js.PublishAsyncComplete()
		for _, m := range msgs {
			if err := m.Ack(); err != nil {
				ts.t.Fatal(err)
			}
		}
		copied += len(msgs)
	}
}

// TestCheckpointBenchRecovery measures how long a keyed job with state
// for 1,000,000 keys takes to restore: the seqcheck job reads one record per
// key, is stopped with a savepoint, and a job from that savepoint reports
// its restore time (building its tasks, reading the savepoint and loading
// the keyed state).
func TestCheckpointBenchRecovery(t *testing.T) {
	if !*checkpointBench {
		t.Skip("a measurement: -checkpoint-bench runs it")
	}
	ts := startTestServer(t)
	mod := ts.upload(wasmbuild.UDF(t, "seqcheck"))
	const keys = 1_000_000
	ctx := context.Background()
	for _, name := range []string{"IN", "OUT"} {
		if _, err := ts.js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{strings.ToLower(name) + ".>"}, Storage: jetstream.FileStorage}); err != nil {
			t.Fatal(err)
		}
	}
	for k := 0; k < keys; k++ {
		if _, err := ts.js.PublishAsync(fmt.Sprintf("in.%d", k%4), fmt.Appendf(nil, `{"k":"key%d","s":1}`, k)); err != nil {
			t.Fatal(err)
		}
		if k%10000 == 9999 {
			<-ts.js.PublishAsyncComplete()
		}
	}
	<-ts.js.PublishAsyncComplete()
	spec := fmt.Sprintf(`
name: recovery
parallelism: 2
checkpoint: {interval: 10s, mode: exactly_once}
state: {budget: 4294967296}
sources: [{id: in, jetstream: {stream: IN, subjects: ["in.0", "in.1", "in.2", "in.3"]}}]
operators: [{id: track, input: in, key_by: {field: k}, process: {module: %s, function: track}}]
sinks: [{id: out, input: track, jetstream: {subject: out.x}}]
`, mod)
	job := ts.submit(spec)
	deadline := time.Now().Add(5 * time.Minute)
	for {
		st, err := ts.js.Stream(ctx, "OUT")
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs >= keys {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d outputs after 5 minutes", info.State.Msgs, keys)
		}
		time.Sleep(time.Second)
	}
	savepoint := ts.stopWithSavepoint(job)
	_, list := ts.call("GET", "/v1/jobs/"+job+"/savepoints", "", nil)
	t.Logf("savepoint: %s", list)
	for i := 0; i < 3; i++ {
		id := ts.submitFrom(spec, savepoint)
		ts.waitFor("the restored job to run", func() bool { return ts.job(id).State == runtime.StateRunning })
		info := ts.job(id)
		if info.Checkpoint == nil || info.Checkpoint.Restored == nil {
			t.Fatalf("no restore: %+v", info.Checkpoint)
		}
		t.Logf("restore %d of state for %d keys: %s", i+1, keys, info.Checkpoint.Restored.Duration)
		ts.call("POST", "/v1/jobs/"+id+"/cancel", "", nil)
	}
}
