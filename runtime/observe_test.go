package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
)

// newLoggedJetStreamManager is a manager with an embedded NATS server whose
// log, as JSON lines, goes to logs.
func newLoggedJetStreamManager(t *testing.T, logs *syncBuffer) (*Manager, jetstream.JetStream) {
	t.Helper()
	ctx := context.Background()
	js := newTestJetStream(t)
	m, err := NewManager(ctx, Config{
		DataDir: t.TempDir(), Host: newTestHost(t), JetStream: js,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m, js
}

// TestObservabilityOfARunningJob runs a job reading JetStream, with keyed
// state, a window that gets late records, a JetStream sink and a print
// sink, and checks the series of each new metric and label, the samples of
// both sinks, and the log of a stop with a savepoint.
func TestObservabilityOfARunningJob(t *testing.T) {
	var logs syncBuffer
	m, js := newLoggedJetStreamManager(t, &logs)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "OUT", Subjects: []string{"out.>"}}); err != nil {
		t.Fatal(err)
	}
	// 500 records 10 ms apart over 50 keys, then 10 records too late for
	// every window (the watermark follows each record: interval 0s).
	for i := range 500 {
		if _, err := js.Publish(ctx, "in.x", fmt.Appendf(nil, `{"id":"k%02d","ts":%d}`, i%50, i*10)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		if _, err := js.Publish(ctx, "in.x", fmt.Appendf(nil, `{"id":"late%d","ts":0}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	// Noise on another subject of the sink's stream, for the sample to skip.
	for i := range 7 {
		if _, err := js.Publish(ctx, "out.noise", fmt.Appendf(nil, "noise %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	mod, err := m.UploadModule(ctx, wasmbuild.UDF(t, "dedup"))
	if err != nil {
		t.Fatal(err)
	}
	info, err := m.SubmitJob(ctx, fmt.Appendf(nil, `
name: observed
parallelism: 2
checkpoint: {interval: 100ms}
sources:
  - id: src
    parallelism: 1
    jetstream: {stream: IN, subjects: ["in.>"]}
    timestamp: {field: ts}
    watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 0s, interval: 0s}
operators:
  - {id: first, input: src, key_by: {field: id}, process: {module: %s, function: dedup}}
  - {id: win, input: src, key_by: {field: id}, window: {type: tumbling, size: 1s}, aggregate: {builtin: count}}
sinks:
  - {id: firsts, input: first, jetstream: {subject: out.firsts}}
  - {id: counts, input: win, print: {keep: 4}}
`, mod.ID))
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID
	job := "job_id=" + id + ",job_name=observed"
	sum := func(family string) float64 {
		var total float64
		for _, mf := range gather(t, m)[family].GetMetric() {
			total += mf.GetCounter().GetValue() + mf.GetGauge().GetValue()
		}
		return total
	}
	// Every record read, every late one counted, and the 60 first-seen
	// records (50 keys, 10 late ones) and 200 window counts (50 keys, 4
	// windows that the watermark closed) written.
	waitBackpressure(t, m, id, func(BackpressureInfo) bool {
		return sum("platform_vertex_late_records_total") == 10 && sum("platform_source_lag_messages") == 0 &&
			atLeast(t, m, "platform_vertex_records_in_total", job+",subtask=0,vertex=src", 510) &&
			atLeast(t, m, "platform_checkpoints_total", job+",outcome=completed", 1) &&
			sum("platform_vertex_records_out_total") >= 510+60+60+200+200
	})
	families := gather(t, m)
	for name, f := range families {
		for _, s := range series(f) {
			if strings.HasPrefix(s, "job=") || strings.Contains(s, ",job=") {
				t.Errorf("%s has a job label: %s", name, s)
			}
		}
	}
	vertex := func(v string, subtask int) string { return fmt.Sprintf("%s,subtask=%d,vertex=%s", job, subtask, v) }
	tests := []struct {
		family string
		series []string
	}{
		{"platform_source_lag_messages", []string{vertex("src", 0)}},
		{"platform_vertex_late_records_total", []string{vertex("win", 0), vertex("win", 1)}},
		{"platform_state_bytes", []string{vertex("first", 0), vertex("first", 1)}},
		{"platform_checkpoints_in_progress", []string{job}},
		{"platform_job_uptime_seconds", []string{job}},
		{"platform_job_state", []string{job + ",state=CANCELED", job + ",state=CANCELLING", job + ",state=CREATED", job + ",state=FAILED",
			job + ",state=FAILING", job + ",state=FINISHED", job + ",state=RESTARTING", job + ",state=RUNNING"}},
		{"platform_vertex_output_watermark_seconds", []string{job + ",vertex=counts", job + ",vertex=first", job + ",vertex=firsts", job + ",vertex=src", job + ",vertex=win"}},
		{"platform_checkpoint_last_size_bytes", []string{job}},
	}
	for _, tt := range tests {
		if got := series(families[tt.family]); !slices.Equal(got, tt.series) {
			t.Errorf("%s series\n%v\nwant\n%v", tt.family, got, tt.series)
		}
	}
	if n := value(t, families["platform_source_lag_messages"], vertex("src", 0)); n != 0 {
		t.Errorf("source lag %g after reading everything, want 0", n)
	}
	for _, s := range []int{0, 1} {
		// Keyed state is reserved from the budget in chunks of 64 KiB.
		if n := value(t, families["platform_state_bytes"], vertex("first", s)); n < 64<<10 || int64(n)%(64<<10) != 0 {
			t.Errorf("subtask %d: state bytes %g, want a positive number of 64 KiB chunks", s, n)
		}
	}
	if n := value(t, families["platform_checkpoints_in_progress"], job); n != 0 && n != 1 {
		t.Errorf("%g checkpoints in progress, want 0 or 1", n)
	}
	if n := value(t, families["platform_job_uptime_seconds"], job); n <= 0 || n > time.Since(info.Created).Seconds() {
		t.Errorf("uptime %g, want between 0 and %g", n, time.Since(info.Created).Seconds())
	}
	for _, s := range jobStates {
		want := 0.0
		if s == StateRunning {
			want = 1
		}
		if n := value(t, families["platform_job_state"], job+",state="+string(s)); n != want {
			t.Errorf("state %s: %g, want %g", s, n, want)
		}
	}

	// The print sink keeps its last 4 records per subtask; the sample is
	// ordered by timestamp, then key.
	sample, err := m.Sample(ctx, id, "", 20)
	if err != nil {
		t.Fatal(err)
	}
	if sample.Sink != "counts" || sample.Kind != "print" || len(sample.Records) != 8 {
		t.Fatalf("sample %+v, want 8 records of the print sink counts", sample)
	}
	if !slices.IsSortedFunc(sample.Records, func(a, b SampleRecord) int {
		if a.Timestamp != b.Timestamp {
			return int(a.Timestamp - b.Timestamp)
		}
		return strings.Compare(a.Key, b.Key)
	}) {
		t.Errorf("sample not ordered by timestamp and key: %+v", sample.Records)
	}
	for _, r := range sample.Records {
		var w struct{ Value int64 }
		if err := json.Unmarshal([]byte(r.Value), &w); err != nil || w.Value != 2 || r.Timestamp != 3999 {
			t.Errorf("sample record %+v: want a count of 2 in the window ending at 4000", r)
		}
	}
	// The JetStream sink's sample is the last messages of its subject.
	sample, err = m.Sample(ctx, id, "firsts", 3)
	if err != nil {
		t.Fatal(err)
	}
	all := readSubject(t, js, "OUT", "out.firsts")
	if len(all) != 60 || sample.Kind != "jetstream" || sample.Subject != "out.firsts" || len(sample.Records) != 3 {
		t.Fatalf("%d messages on out.firsts, sample %+v; want 60 and their last 3", len(all), sample)
	}
	for i, r := range sample.Records {
		if want := all[len(all)-3+i]; r.Value != want {
			t.Errorf("sample record %d: %q, want %q", i, r.Value, want)
		}
	}
	if _, err := m.Sample(ctx, id, "nope", 3); err == nil || !strings.Contains(err.Error(), `no sink "nope"; its sinks are firsts, counts`) {
		t.Errorf("sample of sink nope: %v", err)
	}

	// A stop with a savepoint is logged as that, and nothing at ERROR.
	sp, err := m.StopJob(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if info, err = m.WaitJob(wctx, id); err != nil || info.State != StateFinished {
		t.Fatalf("job %s, %v; want FINISHED", info.State, err)
	}
	var stopped []map[string]any
	for _, line := range logs.lines() {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["level"] == "ERROR" {
			t.Errorf("ERROR line: %s", line)
		}
		if rec["job"] == id && strings.HasPrefix(rec["msg"].(string), "job ") && rec["msg"] != "job running" {
			stopped = append(stopped, rec)
		}
	}
	if len(stopped) != 1 || stopped[0]["msg"] != "job stopped with a savepoint" || stopped[0]["level"] != "INFO" || stopped[0]["savepoint"] != sp.ID {
		t.Errorf("the job's end was logged as %v, want one INFO line job stopped with a savepoint naming %s", stopped, sp.ID)
	}
}

// readSubject reads every message of subject from stream.
func readSubject(t *testing.T, js jetstream.JetStream, stream, subject string) []string {
	t.Helper()
	ctx := context.Background()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		t.Fatal(err)
	}
	total := int(info.State.Subjects[subject])
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for len(out) < total {
		batch, err := cons.Fetch(total-len(out), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for msg := range batch.Messages() {
			out = append(out, string(msg.Data()))
		}
	}
	return out
}
