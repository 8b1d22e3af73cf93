package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
	"wasmstream.io/platform/runtime/replay"
)

// `platform job replay` prints, from a savepoint taken after a3's small
// transaction, a3's two alerts exactly as the sink wrote them (text and
// JSON lines), and says what is wrong with a checkpoint the job lacks and
// an operator that is not keyed.
func TestJobReplayCommand(t *testing.T) {
	ts := startTestServer(t)
	ctx := context.Background()
	module := ts.upload(wasmbuild.UDF(t, "fraud"))
	for _, s := range []jetstream.StreamConfig{{Name: "TRANSACTIONS", Subjects: []string{"transactions.>"}}, {Name: "ALERTS", Subjects: []string{"alerts"}}} {
		if _, err := ts.js.CreateStream(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	id := ts.submit(fmt.Sprintf(`
name: fraud
parallelism: 1
checkpoint: {interval: 1h, mode: exactly_once}
sources:
  - id: transactions
    jetstream: {stream: TRANSACTIONS, subjects: ["transactions.>"]}
    timestamp: {field: ts}
    watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 0s, interval: 0s}
operators:
  - id: detector
    input: transactions
    key_by: {field: account}
    process: {module: %q, function: detect}
    on_timer: expire
sinks:
  - id: alerts
    input: detector
    jetstream: {subject: alerts}
`, module))
	publish := func(txns ...string) {
		for _, x := range txns {
			if _, err := ts.js.Publish(ctx, "transactions.all", []byte(x)); err != nil {
				t.Fatal(err)
			}
		}
	}
	publish(`{"account":"a3","amount":0.5,"ts":1000}`, `{"account":"a4","amount":0.5,"ts":1001}`)
	// waitIn waits until the detector has taken n records, so that a
	// savepoint after it holds their output.
	waitIn := func(n int64) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			_, body := ts.call(http.MethodGet, "/v1/jobs/"+id, "", nil)
			var info runtime.JobInfo
			if err := json.Unmarshal(body, &info); err != nil {
				t.Fatal(err)
			}
			if got := detectorIn(info); got == n {
				return
			} else if time.Now().After(deadline) {
				t.Fatalf("the detector has %d records after a minute, want %d", got, n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitIn(2)
	base := []string{"--server", ts.base}
	out, err := runCLI(t, append([]string{"job", "savepoint", id, "-o", "json"}, base...)...)
	if err != nil {
		t.Fatal(err)
	}
	var sp runtime.SavepointInfo
	if err := json.Unmarshal([]byte(out), &sp); err != nil {
		t.Fatalf("savepoint %q: %v", out, err)
	}
	cp := sp.ID[strings.LastIndex(sp.ID, "-")+1:]
	publish(`{"account":"a3","amount":900,"ts":1010}`, `{"account":"a4","amount":900,"ts":1011}`,
		`{"account":"a3","amount":0.5,"ts":1020}`, `{"account":"a3","amount":700,"ts":1021}`)
	waitIn(6)
	if _, err := runCLI(t, append([]string{"job", "savepoint", id}, base...)...); err != nil {
		t.Fatal(err)
	}
	// a3's alerts answer its large transactions, at stream sequences 3
	// and 6.
	var want []string
	for deadline := time.Now().Add(time.Minute); len(want) != 2; {
		want = want[:0]
		// Direct gets, not a consumer a poll: a minute of polls would
		// leave thousands of consumers behind.
		for _, m := range storedMessages(t, ts.js, "ALERTS") {
			if m.Header.Get("Platform-Key") == "a3" {
				want = append(want, fmt.Sprintf("output <- record %d key=a3 ts=%s value=%s", 3+3*len(want), m.Header.Get("Platform-Timestamp"), m.Data))
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sink has %d alerts of a3 after a minute, want 2", len(want))
		}
		time.Sleep(20 * time.Millisecond)
	}
	text, err := runCLI(t, append([]string{"job", "replay", id, "--checkpoint", cp, "--key", "a3"}, base...)...)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if strings.HasPrefix(line, "output") {
			got = append(got, line)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("replay printed\n%s\nwant the outputs\n%s", text, strings.Join(want, "\n"))
	}
	if !strings.HasSuffix(strings.TrimSpace(text), `end records=3 outputs=2 last_seq=6 reason="end of stream"`) {
		t.Fatalf("replay ends\n%s", text)
	}
	lines, err := runCLI(t, append([]string{"job", "replay", id, "--checkpoint", cp, "--key", "a3", "--format", "json"}, base...)...)
	if err != nil {
		t.Fatal(err)
	}
	var outputs int
	for _, line := range strings.Split(strings.TrimSpace(lines), "\n") {
		var e replay.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if e.Event == replay.EventOutput {
			outputs++
		}
	}
	if outputs != 2 {
		t.Fatalf("json lines have %d outputs, want 2:\n%s", outputs, lines)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--checkpoint", "999", "--key", "a3"}, "Not found (404): unknown checkpoint 999: job " + id + " has checkpoints "},
		{[]string{"--checkpoint", cp, "--key", "a3", "--operator", "transactions"}, `Invalid request (400): bad replay request: operator: the job has no operator "transactions"`},
		{[]string{"--checkpoint", cp, "--key", "a3", "--format", "yaml"}, `--format: "yaml" is not text or json`},
	} {
		_, err := runCLI(t, append(append([]string{"job", "replay", id}, tc.args...), base...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.args, err, tc.want)
		}
	}
}

// detectorIn is the records the detector took in.
func detectorIn(info runtime.JobInfo) int64 {
	for _, v := range info.Vertices {
		if v.ID == "detector" {
			return v.RecordsIn
		}
	}
	return 0
}

// storedMessages reads every message of a small stream by direct gets.
func storedMessages(t *testing.T, js jetstream.JetStream, name string) []*jetstream.RawStreamMsg {
	t.Helper()
	ctx := context.Background()
	st, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}
