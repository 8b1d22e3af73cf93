package runtime

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
)

// The KV-enriched join of docs/JOBS.md: orders from a stream joined with
// the profiles of a reference bucket read through a KV source, each order
// with the tier of its user's profile.
func TestKVEnrichedJoinJob(t *testing.T) {
	m, js := newJetStreamManager(t)
	ctx := context.Background()
	mod, err := m.UploadModule(ctx, wasmbuild.UDF(t, "enrich"))
	if err != nil {
		t.Fatal(err)
	}
	profiles := createBucket(t, js, "PROFILES")
	putKV(t, profiles, "u1", `{"user":"u1","tier":"gold"}`, "u2", `{"user":"u2","tier":"blue"}`)
	for _, s := range []jetstream.StreamConfig{
		{Name: "ORDERS", Subjects: []string{"orders"}},
		{Name: "ENRICHED", Subjects: []string{"orders.enriched"}},
	} {
		if _, err := js.CreateStream(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for i, user := range []string{"u1", "u2", "u3", "u1"} {
		if _, err := js.Publish(ctx, "orders", fmt.Appendf(nil, `{"order":"o%d","user":"%s"}`, i, user)); err != nil {
			t.Fatal(err)
		}
	}
	runJob(t, m, fmt.Sprintf(`
name: enrich
sources:
  - id: orders
    jetstream: {stream: ORDERS, bounded: true}
  - id: profiles
    kv: {bucket: PROFILES, bounded: true}
operators:
  - id: enrich
    join:
      left: {input: orders, key_by: {field: user}}
      right: {input: profiles, key_by: {field: user}}
      interval: {lower: -24h, upper: 0s}
      function: {module: %s, function: enrich}
sinks:
  - {id: out, input: enrich, jetstream: {subject: orders.enriched}}
`, mod.ID))
	got := streamValues(t, js, "ENRICHED")
	slices.Sort(got)
	want := []string{
		`{"order":{"order":"o0","user":"u1"},"tier":"gold"}`,
		`{"order":{"order":"o1","user":"u2"},"tier":"blue"}`,
		`{"order":{"order":"o3","user":"u1"},"tier":"gold"}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("output %v, want %v", got, want)
	}
}
