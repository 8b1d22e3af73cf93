package main

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

// sideJob runs udfs/triage's process function over stream SIDE_IN: small
// orders to side.small, and the side outputs large and invalid to sinks of
// their own; the invalid orders also to a count per user, keyed again.
func sideJob(module string) string {
	return fmt.Sprintf(`
name: sides
parallelism: 2
checkpoint: {interval: 100ms, mode: exactly_once}
restart: {strategy: fixed_delay, delay: 100ms}
sources:
  - id: in
    jetstream: {stream: SIDE_IN, subjects: ["side.in.0", "side.in.1", "side.in.2"], bounded: true}
    timestamp: {field: ts}
operators:
  - id: triage
    input: in
    key_by: {field: user}
    process: {module: %s, function: triage}
    side_outputs: [large, invalid]
  - id: invalid_per_user
    input: triage.invalid
    key_by: {field: user}
    window: {type: tumbling, size: 24h}
    aggregate: {builtin: count}
sinks:
  - {id: small, input: triage, jetstream: {subject: side.small}}
  - {id: large, input: triage.large, jetstream: {subject: side.large}}
  - {id: invalid, input: triage.invalid, parallelism: 1, jetstream: {subject: side.invalid}}
  - {id: counts, input: invalid_per_user, jetstream: {subject: side.counts}}
`, module)
}

// TestSideOutputsExactlyOnce runs a job whose process function routes most
// orders to its main output and the others to two side outputs, each with
// its own exactly-once sink. The large orders' stream refuses writes half
// way, which fails the job over and over until the limit is lifted; each
// restart restores from the latest checkpoint. Every sink then holds
// exactly its orders, once each, with the event time of the order.
func TestSideOutputsExactlyOnce(t *testing.T) {
	ts := startTestServer(t)
	const n, users = 9000, 9
	payloads := make([][]byte, n)
	var small, large, invalid []string
	invalidPerUser := map[string]int{}
	for i := range payloads {
		amount := fmt.Sprint(i * 7 % 1000)
		if i%11 == 10 {
			amount = `"none"`
		}
		payloads[i] = fmt.Appendf(nil, `{"user":"u%d","amount":%s,"ts":%d}`, i%users, amount, 1_700_000_000_000+int64(i)*10)
		switch {
		case i%11 == 10:
			invalid = append(invalid, string(payloads[i]))
			invalidPerUser[fmt.Sprintf("u%d", i%users)]++
		case i*7%1000 >= 900:
			large = append(large, string(payloads[i]))
		default:
			small = append(small, string(payloads[i]))
		}
	}
	ts.publishBy("SIDE_IN", []string{"side.in.>"}, payloads, func(i int) string { return fmt.Sprintf("side.in.%d", i%users%3) })
	ctx := context.Background()
	ts.stream("SIDE_SMALL", []string{"side.small"}, nil)
	ts.stream("SIDE_INVALID", []string{"side.invalid"}, nil)
	ts.stream("SIDE_COUNTS", []string{"side.counts"}, nil)
	if _, err := ts.js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "SIDE_LARGE", Subjects: []string{"side.large"}, MaxMsgs: int64(len(large) / 2), Discard: jetstream.DiscardNew, Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
	id := ts.submit(sideJob(ts.upload(wasmbuild.UDF(t, "triage"))))
	ts.waitFor("a restart", func() bool { return ts.job(id).Restarts > 0 })
	if _, err := ts.js.UpdateStream(ctx, jetstream.StreamConfig{
		Name: "SIDE_LARGE", Subjects: []string{"side.large"}, MaxMsgs: -1, Discard: jetstream.DiscardNew, Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
	if info := ts.wait(id); info.State != runtime.StateFinished || info.Checkpoint.Restored == nil {
		t.Fatalf("job: %s %s %+v", info.State, info.Failure, info.Checkpoint)
	}
	tsField := regexp.MustCompile(`"ts":(\d+)`)
	for _, c := range []struct {
		stream string
		want   []string
	}{{"SIDE_SMALL", small}, {"SIDE_LARGE", large}, {"SIDE_INVALID", invalid}} {
		msgs := ts.read(c.stream)
		for _, m := range msgs {
			if got, want := m.Headers().Get("Platform-Timestamp"), tsField.FindSubmatch(m.Data())[1]; got != string(want) {
				t.Fatalf("%s: %s has Platform-Timestamp %s, want its event time %s", c.stream, m.Data(), got, want)
			}
		}
		got := sortedPayloads(msgs)
		slices.Sort(c.want)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %d orders, want exactly %d, each once", c.stream, len(got), len(c.want))
		}
	}
	// The orders' day starts at 1_699_920_000_000: they all fall in one window.
	var want []string
	for user, count := range invalidPerUser {
		want = append(want, fmt.Sprintf(`{"key":%q,"window_start":1699920000000,"window_end":1700006400000,"value":%d}`, user, count))
	}
	slices.Sort(want)
	if got := sortedPayloads(ts.read("SIDE_COUNTS")); !slices.Equal(got, want) {
		t.Errorf("counts of invalid orders per user:\n got %q\nwant %q", got, want)
	}
}
