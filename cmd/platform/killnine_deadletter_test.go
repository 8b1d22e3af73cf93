package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime/operator"
)

// TestKillNineDeadLetters runs an exactly-once job whose map rejects every
// eighth record (faulty-wat's reject) under on_udf_error: dead_letter in a
// separate platform process, SIGKILLs the process at five random points of
// its progress and restarts it on the same data directory each time. After
// the job finishes, the dead-letter stream holds each poison record exactly
// once, with its headers, and the sink stream each good record exactly once.
func TestKillNineDeadLetters(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills platform processes")
	}
	c, js, closeNATS := startChild(t)
	createStreams(t, js,
		jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}, Storage: jetstream.FileStorage},
		jetstream.StreamConfig{Name: "OUT", Subjects: []string{"out"}, Storage: jetstream.FileStorage},
		jetstream.StreamConfig{Name: "DLQ", Subjects: []string{"dlq"}, Storage: jetstream.FileStorage},
	)
	// Record i has the header Seq: i; every eighth has the value the
	// function rejects.
	const n = 2000
	poison := func(i int) bool { return i%8 == 3 }
	good := 0
	for i := range n {
		m := nats.NewMsg(fmt.Sprintf("in.%d", i%4))
		m.Header.Set("Seq", strconv.Itoa(i))
		m.Data = []byte("r" + strconv.Itoa(i))
		if poison(i) {
			m.Data = []byte("poison")
		} else {
			good++
		}
		if _, err := js.PublishMsgAsync(m); err != nil {
			t.Fatal(err)
		}
	}
	awaitPublished(t, js)

	mod := c.upload(wasmbuild.UDF(t, "faulty-wat"))
	// The throttle stretches the run over a few seconds, so that the kills
	// land while dead letters are staged and committed.
	jobID := c.submit(fmt.Sprintf(`
name: dlq9
parallelism: 2
checkpoint: {interval: 200ms, mode: exactly_once}
restart: {strategy: fixed_delay, delay: 100ms}
on_udf_error: dead_letter
dead_letter_subject: dlq
udf: {batch_size: 16}
sources: [{id: in, jetstream: {stream: IN, subjects: ["in.0", "in.1", "in.2", "in.3"], bounded: true}}]
operators: [{id: m, input: in, map: {module: %s, function: reject}}]
sinks: [{id: out, input: m, jetstream: {subject: out}, throttle: 500}]
`, mod.ID))

	js, closeNATS = c.killAtRandom(jobID, "OUT", uint64(good), 5, js, closeNATS)
	defer closeNATS()
	ts := &testServer{t: t, js: js}

	// Input timestamps by Seq: the dead letter's Platform-Timestamp.
	stamps := map[string]string{}
	for _, m := range ts.read("IN") {
		meta, err := m.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		stamps[m.Headers().Get("Seq")] = strconv.FormatInt(meta.Timestamp.UnixMilli(), 10)
	}
	if len(stamps) != n {
		t.Fatalf("input: %d distinct records, want %d", len(stamps), n)
	}

	out := ts.read("OUT")
	if len(out) != good {
		t.Fatalf("sink stream holds %d messages, want %d", len(out), good)
	}
	seen := map[string]bool{}
	for _, m := range out {
		v := string(m.Data())
		if seen[v] {
			t.Fatalf("sink: %s stored twice", v)
		}
		seen[v] = true
		i, err := strconv.Atoi(strings.TrimPrefix(v, "r"))
		if err != nil || !strings.HasPrefix(v, "r") || i < 0 || i >= n || poison(i) {
			t.Fatalf("sink: unexpected message %q", v)
		}
	}

	dead := ts.read("DLQ")
	if want := n - good; len(dead) != want {
		t.Fatalf("dead-letter stream holds %d messages, want %d", len(dead), want)
	}
	ids := map[string]bool{}
	seqs := map[string]bool{}
	idPrefix := jobID + ".$dlq.in."
	for _, m := range dead {
		h := m.Headers()
		seq := h.Get("Seq")
		i, err := strconv.Atoi(seq)
		if err != nil || !poison(i) {
			t.Fatalf("dead letter of record %q, which is not poison", seq)
		}
		if seqs[seq] {
			t.Fatalf("record %s dead-lettered twice", seq)
		}
		seqs[seq] = true
		if string(m.Data()) != "poison" {
			t.Fatalf("dead letter %s: payload %q", seq, m.Data())
		}
		if e := h.Get(operator.HeaderError); !strings.Contains(e, "rejected poison") {
			t.Fatalf("dead letter %s: %s %q", seq, operator.HeaderError, e)
		}
		if op := h.Get(operator.HeaderOperator); op != "m" {
			t.Fatalf("dead letter %s: %s %q", seq, operator.HeaderOperator, op)
		}
		if ts := h.Get(connector.HeaderTimestamp); ts != stamps[seq] {
			t.Fatalf("dead letter %s: %s %q, want %q", seq, connector.HeaderTimestamp, ts, stamps[seq])
		}
		if _, ok := h[connector.HeaderKey]; !ok {
			t.Fatalf("dead letter %s: no %s header", seq, connector.HeaderKey)
		}
		id := h.Get(nats.MsgIdHdr)
		if !strings.HasPrefix(id, idPrefix) || ids[id] {
			t.Fatalf("dead letter %s: %s %q (want a unique id starting %q)", seq, nats.MsgIdHdr, id, idPrefix)
		}
		ids[id] = true
	}
}

// TestDeadLetterDuplicateWindowWarning: the dead letters of an exactly-once
// job are committed like its sinks' output, so a dead-letter stream that
// de-duplicates over less than a recovery may take gets the sinks' warning.
func TestDeadLetterDuplicateWindowWarning(t *testing.T) {
	ts := startTestServer(t)
	ts.stream("IN", []string{"in"}, nil)
	ts.stream("OUT", []string{"out"}, nil)
	if _, err := ts.js.CreateStream(context.Background(), jetstream.StreamConfig{
		Name: "DLQ", Subjects: []string{"dlq"}, Duplicates: 5 * time.Second, Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
	status, body := ts.call(http.MethodPost, "/v1/jobs", "application/yaml", []byte(`
name: short-dlq-window
checkpoint: {interval: 1s}
restart: {strategy: fixed_delay, delay: 10s}
on_udf_error: dead_letter
dead_letter_subject: dlq
sources: [{id: in, jetstream: {stream: IN}}]
sinks: [{id: out, input: in, jetstream: {subject: out}}]
`))
	if status != http.StatusCreated || !strings.Contains(string(body), `"warnings":["dead_letter_subject: stream DLQ de-duplicates over 5s, less than a recovery may take`) {
		t.Fatalf("submit: %d %s", status, body)
	}
}
