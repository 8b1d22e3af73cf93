package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime/replay"
)

// t0 is the event time the replay tests' transactions start at.
const t0 = 1_700_000_000_000

// txn is a transaction of the fraud job's stream.
type txn struct {
	account string
	amount  float64
	ts      int64
}

// replayJob runs the fraud job (udfs/fraud) on an embedded NATS server:
// the transactions of before, a checkpoint that holds all of them and none
// of after, then after, until the sink has every alert (wantAlerts). It
// returns the manager, the job, the checkpoint and the stream.
func replayJob(t *testing.T, before, after []txn, wantAlerts int) (*Manager, string, int64, jetstream.JetStream) {
	t.Helper()
	m, js := newJetStreamManager(t)
	mod, err := m.UploadModule(context.Background(), wasmbuild.UDF(t, "fraud"))
	if err != nil {
		t.Fatal(err)
	}
	payloads := func(txns []txn) [][]byte {
		var out [][]byte
		for _, x := range txns {
			out = append(out, fmt.Appendf(nil, `{"account":%q,"amount":%.2f,"ts":%d}`, x.account, x.amount, x.ts))
		}
		return out
	}
	job, cp := runAroundCheckpoint(t, m, js, fmt.Sprintf(`
name: fraud
parallelism: 2
checkpoint: {interval: 100ms, mode: exactly_once, retain: 1000}
sources:
  - id: transactions
    parallelism: 1
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
`, mod.ID), payloads(before), payloads(after), wantAlerts)
	return m, job, cp, js
}

// runAroundCheckpoint creates the streams TRANSACTIONS (transactions.>)
// and ALERTS (alerts), submits spec (a job from the first to the second),
// publishes before, waits for the first completed checkpoint whose source
// position is before's last record, publishes after and waits until the
// sink stream has want records. It returns the job and the checkpoint.
func runAroundCheckpoint(t testing.TB, m *Manager, js jetstream.JetStream, spec string, before, after [][]byte, want int) (string, int64) {
	t.Helper()
	ctx := context.Background()
	for _, s := range []jetstream.StreamConfig{
		{Name: "TRANSACTIONS", Subjects: []string{"transactions.>"}},
		{Name: "ALERTS", Subjects: []string{"alerts"}},
	} {
		if _, err := js.CreateStream(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	info, err := m.SubmitJob(ctx, []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	publish := func(payloads [][]byte) uint64 {
		var last uint64
		for _, p := range payloads {
			ack, err := js.Publish(ctx, "transactions.all", p)
			if err != nil {
				t.Fatal(err)
			}
			last = ack.Sequence
		}
		return last
	}
	cp := waitCheckpointAt(t, m, info.ID, publish(before))
	publish(after)
	deadline := time.Now().Add(2 * time.Minute)
	for n := 0; n != want; n = len(sinkAlerts(t, js)) {
		if time.Now().After(deadline) {
			t.Fatalf("the sink has %d records after two minutes, want %d", n, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return info.ID, cp
}

// waitCheckpointAt waits for the first completed checkpoint of job whose
// source position is seq.
func waitCheckpointAt(t testing.TB, m *Manager, job string, seq uint64) int64 {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		all, _ := m.checkpoints.List(ctx, job)
		for _, md := range all {
			b, ok := md.Blobs["positions~transactions~0"]
			if !ok {
				continue
			}
			data, err := m.checkpoints.GetBlob(ctx, job, md.ID, b)
			if err != nil {
				t.Fatal(err)
			}
			var pos map[string]uint64
			if err := json.Unmarshal(data, &pos); err != nil {
				t.Fatal(err)
			}
			// One filter: the job's subject, or the whole stream (">").
			var at uint64
			for _, p := range pos {
				at = max(at, p)
			}
			if at == seq {
				return md.ID
			}
			if at > seq {
				t.Fatalf("checkpoint %d is at %d, past %d", md.ID, at, seq)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no checkpoint at sequence %d in a minute", seq)
	return 0
}

// alert is a record of the sink's stream: its key, value and timestamp
// headers, payload, and the checkpoint that sealed it (from its message id,
// prefix.epoch.index).
type alert struct {
	key, value []byte
	ts         int64
	epoch      int64
}

func sinkAlerts(t testing.TB, js jetstream.JetStream) []alert {
	t.Helper()
	var out []alert
	for _, msg := range streamMessages(t, js, "ALERTS") {
		ts, err := strconv.ParseInt(msg.Header.Get("Platform-Timestamp"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(msg.Header.Get("Nats-Msg-Id"), ".")
		epoch, err := strconv.ParseInt(parts[len(parts)-2], 10, 64)
		if err != nil {
			t.Fatalf("message id %q: %v", msg.Header.Get("Nats-Msg-Id"), err)
		}
		out = append(out, alert{key: []byte(msg.Header.Get("Platform-Key")), value: msg.Data, ts: ts, epoch: epoch})
	}
	return out
}

// fraudInputs are transactions before and after a checkpoint. Before: a
// small transaction of each account a0..a9, a large one of the even
// accounts (5 alerts), and another small one of each, pending at the
// checkpoint with its timer. After: a large one of each (10 alerts, from
// the restored state); small ones; a record of z whose watermark fires
// every timer; large ones (no alert, the state expired); and then a3's
// pairs: 0.50 then 700 (an alert of version 1 only), 1.50 then 900 (an
// alert of version 2 only), 0.50 then 6000 (an alert of both, with a
// severity in version 2).
func fraudInputs() (before, after []txn) {
	for i := range 10 {
		before = append(before, txn{fmt.Sprintf("a%d", i), 0.5, t0 + int64(i)*10})
	}
	for i := 0; i < 10; i += 2 {
		before = append(before, txn{fmt.Sprintf("a%d", i), 900, t0 + 100 + int64(i)})
	}
	for i := range 10 {
		before = append(before, txn{fmt.Sprintf("a%d", i), 0.5, t0 + 200 + int64(i)})
	}
	for i := range 10 {
		after = append(after, txn{fmt.Sprintf("a%d", i), 900, t0 + 300 + int64(i)})
	}
	for i := range 10 {
		after = append(after, txn{fmt.Sprintf("a%d", i), 0.5, t0 + 400 + int64(i)})
	}
	after = append(after, txn{"z", 1, t0 + 70_400})
	for i := range 10 {
		after = append(after, txn{fmt.Sprintf("a%d", i), 900, t0 + 70_500 + int64(i)})
	}
	return before, append(after,
		txn{"a3", 0.5, t0 + 80_000}, txn{"a3", 700, t0 + 80_001},
		txn{"a3", 1.5, t0 + 80_010}, txn{"a3", 900, t0 + 80_011},
		txn{"a3", 0.5, t0 + 80_020}, txn{"a3", 6000, t0 + 80_021})
}

// replayEvents replays req of job and returns its events.
func replayEvents(t testing.TB, m *Manager, job string, req replay.Request) []replay.Event {
	t.Helper()
	var events []replay.Event
	if err := m.ReplayKey(context.Background(), job, req, func(e replay.Event) error {
		events = append(events, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return events
}

// A replay of the recorded module from a checkpoint reproduces the job's
// output for the key after that checkpoint byte for byte (key, value,
// timestamp), and reports the key's restored state and timer, its inputs,
// state changes and timers; a replay with another module diffs the
// outputs.
func TestReplayKeyReproducesTheJob(t *testing.T) {
	before, after := fraudInputs()
	m, job, cp, _ := replayJob(t, before, after, 5+10+2)
	js := m.cfg.JetStream
	var want []alert
	for _, a := range sinkAlerts(t, js) {
		if a.epoch > cp && string(a.key) == "a3" {
			want = append(want, a)
		}
	}
	if len(want) != 3 {
		t.Fatalf("the sink has %d alerts of a3 after checkpoint %d, want 3: %+v", len(want), cp, want)
	}
	events := replayEvents(t, m, job, replay.Request{Checkpoint: cp, Key: replay.Bytes("a3")})
	var got []replay.Event
	kinds := map[string]int{}
	for _, e := range events {
		kinds[e.Event+" "+e.Op]++
		if e.Event == replay.EventOutput {
			got = append(got, e)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("replay output %d records, the job %d: %+v", len(got), len(want), events)
	}
	for i := range got {
		if !bytes.Equal(got[i].Key, want[i].key) || !bytes.Equal(got[i].Value, want[i].value) || *got[i].Timestamp != want[i].ts {
			t.Fatalf("output %d: replay %q %q %d, job %q %q %d", i, got[i].Key, got[i].Value, *got[i].Timestamp, want[i].key, want[i].value, want[i].ts)
		}
	}
	// a3 after the checkpoint: 9 transactions; the restored small
	// transaction and its timer; a set and a timer registered for each
	// small one (0.50 at 403, 80000, 80020); a clear and a timer deleted
	// for each transaction that follows a small one (at 303, 80001,
	// 80021), and a clear by the one timer that fires (403's, at z's
	// watermark); alerts at 303, 80001 and 80021.
	wantKinds := map[string]int{
		"restored ": 1, "restored pending": 1, "input ": 9, "output ": 3,
		"state set": 3, "state clear": 4, "timer register": 3, "timer delete": 3, "timer fire": 1, "end ": 1,
	}
	if fmt.Sprint(kinds) != fmt.Sprint(wantKinds) {
		t.Fatalf("events %v\nwant %v", kinds, wantKinds)
	}
	end := events[len(events)-1]
	if end.Event != replay.EventEnd || end.Records != 9 || end.Outputs != 3 || end.Reason != replay.ReasonEnd || end.LastSeq != uint64(len(before)+len(after)) {
		t.Fatalf("end %+v", end)
	}

	// --records 1: the first transaction only, and its alert.
	short := replayEvents(t, m, job, replay.Request{Checkpoint: cp, Key: replay.Bytes("a3"), Records: 1})
	if end := short[len(short)-1]; end.Records != 1 || end.Outputs != 1 || end.Reason != replay.ReasonRecords {
		t.Fatalf("--records 1 ends %+v", end)
	}

	// --until the sequence of a3's first transaction after the checkpoint.
	until := uint64(len(before) + 4)
	upTo := replayEvents(t, m, job, replay.Request{Checkpoint: cp, Key: replay.Bytes("a3"), Until: until})
	if end := upTo[len(upTo)-1]; end.Records != 1 || end.Outputs != 1 || end.Reason != replay.ReasonUntil || end.LastSeq != until {
		t.Fatalf("--until %d ends %+v", until, end)
	}

	v2, err := m.UploadModule(context.Background(), wasmbuild.UDF(t, "fraud-v2"))
	if err != nil {
		t.Fatal(err)
	}
	var verdicts []string
	for _, e := range replayEvents(t, m, job, replay.Request{Checkpoint: cp, Key: replay.Bytes("a3"), Module: v2.ID}) {
		if e.Event != replay.EventDiff {
			continue
		}
		line := e.Verdict
		for _, o := range []*replay.Event{e.Old, e.New} {
			if o != nil {
				line += " " + string(o.Value)
			}
		}
		verdicts = append(verdicts, line)
	}
	wantVerdicts := []string{
		`same {"account":"a3","ts":1700000000303,"amount":900.00}`,
		`only_in_old {"account":"a3","ts":1700000080001,"amount":700.00}`,
		`only_in_new {"account":"a3","ts":1700000080011,"amount":900.00}`,
		`changed {"account":"a3","ts":1700000080021,"amount":6000.00} {"account":"a3","ts":1700000080021,"amount":6000.00,"severity":"high"}`,
	}
	if strings.Join(verdicts, "\n") != strings.Join(wantVerdicts, "\n") {
		t.Fatalf("diff\n%s\nwant\n%s", strings.Join(verdicts, "\n"), strings.Join(wantVerdicts, "\n"))
	}
}

// Requests a replay cannot serve fail with the error that says why.
func TestReplayKeyErrors(t *testing.T) {
	before, after := fraudInputs()
	m, job, cp, js := replayJob(t, before, after[:1], 5+1)
	for _, tc := range []struct {
		name string
		req  replay.Request
		want error
		text string
	}{
		{"unknown checkpoint", replay.Request{Checkpoint: 999_999, Key: replay.Bytes("a3")}, replay.ErrUnknownCheckpoint, "unknown checkpoint 999999"},
		{"operator not keyed", replay.Request{Checkpoint: cp, Key: replay.Bytes("a3"), Operator: "transactions"}, replay.ErrBadRequest, `the job has no operator "transactions"`},
		{"empty key", replay.Request{Checkpoint: cp}, replay.ErrBadRequest, "key: must not be empty"},
		{"unknown module", replay.Request{Checkpoint: cp, Key: replay.Bytes("a3"), Module: "sha256:00"}, replay.ErrBadRequest, "module"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := m.ReplayKey(context.Background(), job, tc.req, func(replay.Event) error { return nil })
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("got %v, want %v with %q", err, tc.want, tc.text)
			}
		})
	}
	if _, err := m.CancelJob(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteStream(context.Background(), "TRANSACTIONS"); err != nil {
		t.Fatal(err)
	}
	err := m.ReplayKey(context.Background(), job, replay.Request{Checkpoint: cp, Key: replay.Bytes("a3")}, func(replay.Event) error { return nil })
	if !errors.Is(err, replay.ErrSourceGone) || !strings.Contains(err.Error(), `stream "TRANSACTIONS" does not exist`) {
		t.Fatalf("stream gone: %v", err)
	}
}

// A keyed window (a built-in count over tumbling windows) of a source that
// reads a whole stream replays as a process function does: the windows of the key restored at the
// checkpoint, and the results of the key that the sink got after it, byte
// for byte; the other keys of its key group are left out. Replay runs the
// built-in extract in front of the window as the job does.
func TestReplayKeyWindow(t *testing.T) {
	plain := func(user string, ts int64) []byte { return fmt.Appendf(nil, `{"user":%q,"ts":%d}`, user, ts) }
	wrapped := func(user string, ts int64) []byte {
		return fmt.Appendf(nil, `{"kind":"click","click":{"user":%q},"ts":%d}`, user, ts)
	}
	extracted := strings.Replace(clicksJob, "input: transactions, key_by", "input: click, key_by", 1)
	extracted = strings.Replace(extracted, "operators:\n", "operators:\n  - {id: click, input: transactions, extract: {field: click}}\n", 1)
	t.Run("source", func(t *testing.T) { testReplayKeyWindow(t, clicksJob, plain) })
	t.Run("extract", func(t *testing.T) { testReplayKeyWindow(t, extracted, wrapped) })
}

func testReplayKeyWindow(t *testing.T, jobSpec string, click func(user string, ts int64) []byte) {
	m, js := newJetStreamManager(t)
	var before, after [][]byte
	for i := range 5 {
		before = append(before, click(fmt.Sprintf("u%d", i), 100+int64(i)))
	}
	for i := range 5 {
		after = append(after, click(fmt.Sprintf("u%d", i), 500+int64(i)), click("u3", 600+int64(i)))
	}
	after = append(after, click("u3", 1500), click("u1", 1600), click("z", 5000))
	// Results: [0, 1000) of u0..u4, [1000, 2000) of u3 and u1.
	job, cp := runAroundCheckpoint(t, m, js, jobSpec, before, after, 7)
	var want []alert
	for _, a := range sinkAlerts(t, js) {
		if a.epoch > cp && string(a.key) == "u3" {
			want = append(want, a)
		}
	}
	if len(want) != 2 {
		t.Fatalf("the sink has %d results of u3 after checkpoint %d, want 2", len(want), cp)
	}
	var got []replay.Event
	events := replayEvents(t, m, job, replay.Request{Checkpoint: cp, Key: replay.Bytes("u3")})
	for _, e := range events {
		if e.Event == replay.EventOutput {
			got = append(got, e)
		}
	}
	// u3's 7 inputs, the first its click at 600, the second record after
	// the checkpoint.
	if end := events[len(events)-1]; end.Records != 7 || end.LastSeq != uint64(len(before)+len(after)) || events[0].Event != replay.EventInput || events[0].Seq != uint64(len(before)+2) {
		t.Fatalf("first event %+v, end %+v", events[0], end)
	}
	if len(got) != len(want) {
		t.Fatalf("replay output %d records, the job %d: %+v", len(got), len(want), got)
	}
	for i := range got {
		if !bytes.Equal(got[i].Key, want[i].key) || !bytes.Equal(got[i].Value, want[i].value) || *got[i].Timestamp != want[i].ts {
			t.Fatalf("output %d: replay %q %q %d, job %q %q %d", i, got[i].Key, got[i].Value, *got[i].Timestamp, want[i].key, want[i].value, want[i].ts)
		}
	}
	if !strings.Contains(string(want[0].value), `"value":7`) {
		t.Fatalf("u3's first window counted %s, want 7 (1 before the checkpoint, 6 after)", want[0].value)
	}
}

// clicksJob counts each user's clicks in 1 s event-time windows, from
// stream TRANSACTIONS to subject alerts.
const clicksJob = `
name: clicks
checkpoint: {interval: 100ms, mode: exactly_once, retain: 1000}
sources:
  - id: transactions
    jetstream: {stream: TRANSACTIONS}
    timestamp: {field: ts}
    watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 0s, interval: 0s}
operators:
  - {id: counts, input: transactions, key_by: {field: user}, window: {type: tumbling, size: 1s}, aggregate: {builtin: count}}
sinks:
  - {id: out, input: counts, jetstream: {subject: alerts}}
`
