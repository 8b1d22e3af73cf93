package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

// seqRecords are keys*perKey records {"k": key, "s": seq} for the seqcheck
// UDF, each key numbered 1..perKey in order, interleaved across keys; key i
// goes to subject prefix.<i % subjects> so that its records keep their order.
func seqRecords(keys, perKey, subjects int, prefix string) (payloads [][]byte, subject func(i int) string) {
	var subj []string
	for s := 1; s <= perKey; s++ {
		for k := 0; k < keys; k++ {
			payloads = append(payloads, fmt.Appendf(nil, `{"k":"key%d","s":%d}`, k, s))
			subj = append(subj, fmt.Sprintf("%s.%d", prefix, k%subjects))
		}
	}
	return payloads, func(i int) string { return subj[i] }
}

// seqOutput is one output of seqcheck's track.
type seqOutput struct {
	K string `json:"k"`
	S int64  `json:"s"`
	P int64  `json:"p"`
}

// checkSequences asserts that payloads hold every key's outputs 1..perKey
// exactly once, in order per key, each with the previous sequence number as
// restored state saw it: 0 lost, 0 duplicated, 0 out of order, state intact.
func checkSequences(t *testing.T, payloads [][]byte, keys, perKey int) {
	t.Helper()
	next := map[string]int64{}
	var lost, duplicated, disordered, badState int
	for _, p := range payloads {
		var o seqOutput
		if err := json.Unmarshal(p, &o); err != nil {
			t.Fatalf("output %q: %v", p, err)
		}
		want := next[o.K] + 1
		switch {
		case o.S < want:
			duplicated++
		case o.S > want:
			disordered++
			next[o.K] = o.S
		default:
			next[o.K] = o.S
		}
		if o.P != o.S-1 {
			badState++
		}
	}
	for k := 0; k < keys; k++ {
		if got := next[fmt.Sprintf("key%d", k)]; got < int64(perKey) {
			lost += perKey - int(got)
		}
	}
	if total := len(payloads); lost+duplicated+disordered+badState > 0 || total != keys*perKey {
		t.Fatalf("%d outputs for %d records: %d lost, %d duplicated, %d out of order, %d with a state that was not the previous record's",
			total, keys*perKey, lost, duplicated, disordered, badState)
	}
}

func payloadsOf(msgs []jetstream.Msg) [][]byte {
	out := make([][]byte, len(msgs))
	for i, m := range msgs {
		out[i] = m.Data()
	}
	return out
}

// seqJob is a keyed seqcheck job from stream IN to subject out.
func seqJob(module string, parallelism int, extra string) string {
	return fmt.Sprintf(`
name: seq
parallelism: %d
checkpoint: {interval: 100ms, mode: exactly_once}
%s
sources: [{id: in, jetstream: {stream: IN, subjects: ["in.>"], bounded: true}}]
operators: [{id: track, input: in, key_by: {field: k}, process: {module: %s, function: track}}]
sinks: [{id: out, input: track, jetstream: {subject: out}}]
`, parallelism, extra, module)
}

// TestExactlyOnceAcrossConnectorFailures: the sink's stream refuses writes
// once it holds half the output, which fails the sink; the job restarts from
// its latest checkpoint until the test lifts the limit. Every output is
// stored exactly once, in order per key, with keyed state intact.
func TestExactlyOnceAcrossConnectorFailures(t *testing.T) {
	ts := startTestServer(t)
	mod := ts.upload(wasmbuild.UDF(t, "seqcheck"))
	const keys, perKey = 50, 200
	payloads, subject := seqRecords(keys, perKey, 4, "in")
	ts.publishBy("IN", []string{"in.>"}, payloads, subject)
	ctx := context.Background()
	if _, err := ts.js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "OUT", Subjects: []string{"out"}, MaxMsgs: keys * perKey / 2, Discard: jetstream.DiscardNew, Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
	id := ts.submit(seqJob(mod, 2, "restart: {strategy: fixed_delay, delay: 100ms}"))
	ts.waitFor("a restart", func() bool { return ts.job(id).Restarts > 0 })
	if _, err := ts.js.UpdateStream(ctx, jetstream.StreamConfig{
		Name: "OUT", Subjects: []string{"out"}, MaxMsgs: -1, Discard: jetstream.DiscardNew, Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
	info := ts.wait(id)
	if info.State != runtime.StateFinished {
		t.Fatalf("job %s: %s", info.State, info.Failure)
	}
	if info.Checkpoint == nil || info.Checkpoint.Completed == 0 || info.Checkpoint.Restored == nil {
		t.Fatalf("checkpoint info: %+v", info.Checkpoint)
	}
	checkSequences(t, payloadsOf(ts.read("OUT")), keys, perKey)
	status, body := ts.call(http.MethodGet, "/v1/jobs/"+id+"/checkpoints", "", nil)
	if status != http.StatusOK || !strings.Contains(string(body), `"status":"COMPLETED"`) {
		t.Fatalf("checkpoints: %d %s", status, body)
	}
}

// TestRestoreRefusesPositionsBeyondTheStream: while the platform is down the
// source stream is deleted and recreated shorter; resuming the job from its
// checkpoint would skip the new stream's messages, so it fails with a
// message that says why.
func TestRestoreRefusesPositionsBeyondTheStream(t *testing.T) {
	dir := t.TempDir()
	ts := startTestServerIn(t, dir)
	mod := ts.upload(wasmbuild.UDF(t, "upper-wat"))
	ts.stream("IN", []string{"in"}, values("a", 0, 1000))
	ts.stream("OUT", []string{"out"}, nil)
	id := ts.submit(fmt.Sprintf(`
name: beyond
checkpoint: {interval: 50ms}
sources: [{id: in, jetstream: {stream: IN}}]
operators: [{id: up, input: in, map: {module: %s, function: upper}}]
sinks: [{id: out, input: up, jetstream: {subject: out}}]
`, mod))
	ts.waitFor("output and a checkpoint after it", func() bool {
		info := ts.job(id)
		return len(ts.read("OUT")) == 1000 && info.Checkpoint != nil && info.Checkpoint.Completed > 3
	})
	ts.stop()
	recreateStream(t, filepath.Join(dir, "nats"), "IN", "in", 10)
	ts = startTestServerIn(t, dir)
	info := ts.wait(id)
	if info.State != runtime.StateFailed || !strings.Contains(info.Failure, "beyond the stream's end") {
		t.Fatalf("job %s: %s", info.State, info.Failure)
	}
}

// recreateStream replaces a stream of the JetStream store in dir with one of
// n messages, with a server of its own.
func recreateStream(t *testing.T, dir, name, subject string, n int) {
	t.Helper()
	ctx := context.Background()
	srv, err := connector.StartEmbedded(ctx, connector.EmbeddedConfig{DataDir: dir, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Shutdown(ctx) }()
	nc, js, err := connector.Connect(ctx, srv.ClientURL(), "recreate")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := js.DeleteStream(ctx, name); err != nil {
		t.Fatal(err)
	}
	if err := connector.EnsureStream(ctx, js, name, subject); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := js.Publish(ctx, subject, []byte("new")); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDuplicateWindowWarning: an exactly-once sink whose stream
// de-duplicates over less than a recovery may take is accepted with a
// warning that says what it implies.
func TestDuplicateWindowWarning(t *testing.T) {
	ts := startTestServer(t)
	ts.stream("IN", []string{"in"}, nil)
	if _, err := ts.js.CreateStream(context.Background(), jetstream.StreamConfig{
		Name: "OUT", Subjects: []string{"out"}, Duplicates: 5 * time.Second, Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
	status, body := ts.call(http.MethodPost, "/v1/jobs", "application/yaml", []byte(`
name: short-window
checkpoint: {interval: 1s}
restart: {strategy: fixed_delay, delay: 10s}
sources: [{id: in, jetstream: {stream: IN}}]
sinks: [{id: out, input: in, jetstream: {subject: out}}]
`))
	if status != http.StatusCreated || !strings.Contains(string(body), `"warnings":["sinks[0]: stream OUT de-duplicates over 5s, less than a recovery may take`) ||
		!strings.Contains(string(body), "read") {
		t.Fatalf("submit: %d %s", status, body)
	}
}
