package main

import (
	"bytes"
	"context"
	"testing"

	"wasmstream.io/platform/internal/nexmark"
)

// TestNexmarkPublish publishes events into the embedded server's JetStream
// and reads them back: each event once, in order, on its kind's subject,
// and the events the model gives for the seed.
func TestNexmarkPublish(t *testing.T) {
	ts := startTestServer(t)
	url := ts.s.embedded.ClientURL()
	tests := []struct {
		args    []string
		stream  string
		events  int64
		seed    int64
		want    string
		subject [3]string
	}{
		{[]string{"--events", "500", "--seed", "5", "--max-in-flight", "16"}, "NEXMARK", 500, 5,
			"published 500 events (10 persons, 30 auctions, 460 bids) to stream NEXMARK in ",
			[3]string{"nexmark.person", "nexmark.auction", "nexmark.bid"}},
		{[]string{"--events", "60", "--rate", "3000", "--subject-prefix", "nx.q", "--stream", "NX"}, "NX", 60, 0,
			"published 60 events (2 persons, 6 auctions, 52 bids) to stream NX in ",
			[3]string{"nx.q.person", "nx.q.auction", "nx.q.bid"}},
	}
	for _, tt := range tests {
		out, _, err := runCLIWith(context.Background(), "", append(append([]string{"nexmark", "publish"}, tt.args...), "--nats", url)...)
		if err != nil || len(out) < len(tt.want) || out[:len(tt.want)] != tt.want {
			t.Fatalf("publish %v: %q, %v; want %q...", tt.args, out, err, tt.want)
		}
		rate := 0
		if tt.stream == "NX" {
			rate = 3000
		}
		g, err := nexmark.New(nexmark.Config{Count: tt.events, Seed: tt.seed, EventRate: rate})
		if err != nil {
			t.Fatal(err)
		}
		msgs := ts.read(tt.stream)
		if int64(len(msgs)) != tt.events {
			t.Fatalf("stream %s holds %d messages, want %d", tt.stream, len(msgs), tt.events)
		}
		for i, m := range msgs {
			want := g.AppendEvent(nil, int64(i))
			if m.Subject() != tt.subject[g.Kind(int64(i))] || !bytes.Equal(m.Data(), want) {
				t.Fatalf("message %d: %s %s, want %s %s", i, m.Subject(), m.Data(), tt.subject[g.Kind(int64(i))], want)
			}
		}
	}
	_, _, err := runCLIWith(context.Background(), "", "nexmark", "publish", "--events", "0", "--nats", url)
	if err == nil || err.Error() != "--events and --max-in-flight must be at least 1, --rate and --event-rate not negative" {
		t.Fatalf("--events 0: %v", err)
	}
}
