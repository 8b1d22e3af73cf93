package runtime

import (
	"context"
	"slices"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// A job driven by a test_stream (Flink's TestStream): its explicit
// watermarks fire each window exactly when the script says, so a record
// that comes after the watermark passed its window is late and dropped,
// and one that comes before it counts, whatever the records' order.
func TestTestStreamJob(t *testing.T) {
	m, js := newJetStreamManager(t)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "COUNTS", Subjects: []string{"counts"}}); err != nil {
		t.Fatal(err)
	}
	runJob(t, m, `
name: scripted
sources:
  - id: script
    test_stream:
      steps:
        - record: {key: a, value: '{"user":"a"}', timestamp: 1000}
        - record: {key: b, value: '{"user":"b"}', timestamp: 9000}
        - record: {key: a, value: '{"user":"a"}', timestamp: 12000}
        - record: {key: a, value: '{"user":"a"}', timestamp: 2000}
        - watermark: 9999
        - record: {key: a, value: '{"user":"a"}', timestamp: 3000}
        - record: {key: b, value: '{"user":"b"}', timestamp: 10000}
        - watermark: 19999
        - watermark: 25000
        - record: {key: a, value: '{"user":"a"}', timestamp: 19999}
        - record: {key: b, value: '{"user":"b"}', timestamp: 20000}
operators:
  - id: per_user
    input: script
    key_by: {field: user}
    window: {type: tumbling, size: 10s}
    aggregate: {builtin: count}
sinks:
  - {id: out, input: per_user, jetstream: {subject: counts}}
`)
	got := streamValues(t, js, "COUNTS")
	want := []string{
		`{"key":"a","window_start":0,"window_end":10000,"value":2}`,
		`{"key":"b","window_start":0,"window_end":10000,"value":1}`,
		`{"key":"a","window_start":10000,"window_end":20000,"value":1}`,
		`{"key":"b","window_start":10000,"window_end":20000,"value":1}`,
		`{"key":"b","window_start":20000,"window_end":30000,"value":1}`,
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("counts %q, want %q", got, want)
	}
}
