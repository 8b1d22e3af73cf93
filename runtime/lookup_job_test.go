package runtime

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

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

// An exactly-once async_lookup job through the failure schedule of
// TestFailingMapperSchedule: the records whose lookups were in flight at
// each restored checkpoint are looked up again, and every order reaches the
// sink exactly once.
func TestAsyncLookupJobFailures(t *testing.T) {
	m, js := newJetStreamManager(t)
	ctx := context.Background()
	mod, err := m.UploadModule(ctx, wasmbuild.UDF(t, "lookup"))
	if err != nil {
		t.Fatal(err)
	}
	users := createBucket(t, js, "users")
	putKV(t, users, "u1", `{"tier":"gold"}`)
	for _, s := range []jetstream.StreamConfig{
		{Name: "ORDERS", Subjects: []string{"orders"}},
		{Name: "ENRICHED", Subjects: []string{"orders.enriched"}},
	} {
		if _, err := js.CreateStream(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	const n = 20000
	var want []string
	for i := range n {
		user := []string{"u1", "u2"}[i%2]
		order := fmt.Sprintf(`{"order":%d,"user":"%s"}`, i, user)
		if _, err := js.PublishAsync("orders", []byte(order)); err != nil {
			t.Fatal(err)
		}
		profile := map[string]string{"u1": `{"tier":"gold"}`, "u2": "null"}[user]
		want = append(want, fmt.Sprintf(`{"order":%s,"profile":%s}`, order, profile))
	}
	<-js.PublishAsyncComplete()
	injected := runFailureSchedule(t, m, fmt.Appendf(nil, `
name: lookup-failures
checkpoint: {interval: 20ms, mode: exactly_once}
restart: {strategy: fixed_delay, delay: 10ms}
sources: [{id: orders, jetstream: {stream: ORDERS, bounded: true}}]
operators:
  - id: enrich
    input: orders
    async_lookup: {module: %s, request: ask_kv, function: join, capacity: 16, output: unordered}
sinks:
  - {id: out, input: enrich, jetstream: {subject: orders.enriched}}
`, mod.ID), 3*time.Minute)
	got := streamValues(t, js, "ENRICHED")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%d outputs for %d orders after failures %q: lost or duplicated", len(got), len(want), injected)
	}
}
