package runtime

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// KV and core NATS sources report their lag, and a core NATS source what
// the client dropped.
func TestConnectorSourceMetrics(t *testing.T) {
	m, js := newJetStreamManager(t)
	ctx := context.Background()
	kv := createBucket(t, js, "REF")
	putKV(t, kv, "a", "1", "b", "2")
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "OUT", Subjects: []string{"out"}}); err != nil {
		t.Fatal(err)
	}
	info, err := m.SubmitJob(ctx, []byte(`
name: metrics
sources:
  - {id: ref, kv: {bucket: REF}}
  - {id: core, nats: {subject: core}}
sinks:
  - {id: out, input: ref, jetstream: {subject: out}}
  - {id: drop, input: core, discard: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the entries", func() bool { return len(streamValues(t, js, "OUT")) == 2 })
	labels := func(vertex string) string {
		return "job_id=" + info.ID + ",job_name=metrics,subtask=0,vertex=" + vertex
	}
	waitFor(t, "the source series", func() bool {
		f := gather(t, m)
		lagKV, okKV := lookup(f["platform_source_lag_messages"], labels("ref"))
		lagCore, okCore := lookup(f["platform_source_lag_messages"], labels("core"))
		_, okDropped := lookup(f["platform_source_dropped_total"], labels("core"))
		return okKV && okCore && okDropped && lagKV == 0 && lagCore == 0
	})
	if _, ok := lookup(gather(t, m)["platform_source_dropped_total"], labels("ref")); ok {
		t.Fatal("a KV source reports dropped messages")
	}
	if _, err := m.CancelJob(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
}
