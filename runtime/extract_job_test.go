package runtime

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// TestExtractJob: `extract` makes each record's value a member of its JSON
// object, as written, without a module: null members produce nothing, a
// record without the member is dead-lettered with the field named, and the
// extracted values flow on into a keyed window with exact results.
func TestExtractJob(t *testing.T) {
	m, js := newJetStreamManager(t)
	ctx := context.Background()
	for _, s := range []jetstream.StreamConfig{{Name: "BIDS", Subjects: []string{"bids"}}, {Name: "MAX", Subjects: []string{"max"}}, {Name: "DLQ", Subjects: []string{"dlq"}}} {
		if _, err := js.CreateStream(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	runJob(t, m, `
name: extract
on_udf_error: dead_letter
dead_letter_subject: dlq
sources:
  - id: events
    test_stream:
      steps:
        - record: {value: '{"event_type":2,"person":null,"bid":{"auction":7,"price":30,"url":"a\"b"}}', timestamp: 1000}
        - record: {value: '{"event_type":0,"person":{"id":1},"bid":null}', timestamp: 2000}
        - record: {value: '{"event_type":2, "bid" : {"auction":7,"price":45} }', timestamp: 3000}
        - record: {value: '{"event_type":2,"bid":{"auction":8,"price":5}}', timestamp: 4000}
        - record: {value: '{"event_type":1}', timestamp: 5000}
        - record: {value: '{"bid":[1, 2]}', timestamp: 6000}
operators:
  - {id: bids, input: events, extract: {field: bid}}
  - id: highest
    input: bids
    key_by: {field: auction}
    window: {type: tumbling, size: 10s}
    aggregate: {builtin: max, field: price}
sinks:
  - {id: out, input: bids, jetstream: {subject: bids}}
  - {id: max, input: highest, jetstream: {subject: max}}
`)
	wantBids := []string{`{"auction":7,"price":30,"url":"a\"b"}`, `{"auction":7,"price":45}`, `{"auction":8,"price":5}`, `[1, 2]`}
	if got := streamValues(t, js, "BIDS"); !slices.Equal(got, wantBids) {
		t.Fatalf("extracted %q, want %q", got, wantBids)
	}
	// The array has no auction to key by: a second dead letter, from the
	// window's key_by.
	got := streamValues(t, js, "MAX")
	slices.Sort(got)
	want := []string{
		`{"key":"7","window_start":0,"window_end":10000,"value":45}`,
		`{"key":"8","window_start":0,"window_end":10000,"value":5}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("maxima %q, want %q", got, want)
	}
	letters := streamMessages(t, js, "DLQ")
	if len(letters) != 2 {
		t.Fatalf("%d dead letters, want 2", len(letters))
	}
	if l := letters[0]; string(l.Data) != `{"event_type":1}` || !strings.Contains(l.Header.Get("Platform-Error"), `extract.field "bid": field not found`) || l.Header.Get("Platform-Operator") != "bids" {
		t.Fatalf("dead letter %q %v", l.Data, l.Header)
	}
	if l := letters[1]; string(l.Data) != `[1, 2]` || l.Header.Get("Platform-Operator") != "highest" {
		t.Fatalf("dead letter %q %v", l.Data, l.Header)
	}
}
