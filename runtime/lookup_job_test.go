package runtime

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
)

// An async_lookup job end to end: orders from a bounded stream enriched with
// the profiles of a KV bucket, in an exactly-once job with two subtasks and
// unordered output, each order exactly once.
func TestAsyncLookupJob(t *testing.T) {
	m, js := newJetStreamManager(t)
	ctx := context.Background()
	mod, err := m.UploadModule(ctx, wasmbuild.UDF(t, "lookup"))
	if err != nil {
		t.Fatal(err)
	}
	users := createBucket(t, js, "users")
	putKV(t, users, "u1", `{"tier":"gold"}`, "u2", `{"tier":"blue"}`)
	for _, s := range []jetstream.StreamConfig{
		{Name: "ORDERS", Subjects: []string{"orders"}},
		{Name: "ENRICHED", Subjects: []string{"orders.enriched"}},
	} {
		if _, err := js.CreateStream(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for i := range 200 {
		user := []string{"u1", "u2", "u3"}[i%3]
		order := fmt.Sprintf(`{"order":%d,"user":"%s"}`, i, user)
		if _, err := js.Publish(ctx, "orders", []byte(order)); err != nil {
			t.Fatal(err)
		}
		profile := map[string]string{"u1": `{"tier":"gold"}`, "u2": `{"tier":"blue"}`, "u3": "null"}[user]
		want = append(want, fmt.Sprintf(`{"order":%s,"profile":%s}`, order, profile))
	}
	runJob(t, m, fmt.Sprintf(`
name: lookup
parallelism: 2
checkpoint: {interval: 50ms}
sources:
  - id: orders
    parallelism: 1
    jetstream: {stream: ORDERS, bounded: true}
operators:
  - id: enrich
    input: orders
    partition: rebalance
    async_lookup: {module: %s, request: ask_kv, function: join, capacity: 8, output: unordered}
sinks:
  - {id: out, input: enrich, jetstream: {subject: orders.enriched}}
`, mod.ID))
	got := streamValues(t, js, "ENRICHED")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%d outputs, want %d:\n%v", len(got), len(want), got)
	}
}
