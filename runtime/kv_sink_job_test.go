package runtime

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
)

// kvValues is every key of a bucket with its value.
func kvValues(t *testing.T, js jetstream.JetStream, bucket string) map[string]string {
	t.Helper()
	ctx := context.Background()
	kv, err := js.KeyValue(ctx, bucket)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for k := range keys.Keys() {
		e, err := kv.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = string(e.Value())
	}
	return out
}

// publishKeyed sends {"k":"k<i%keys>","v":i} for i in [from, to) to subject
// and returns the last value of each key, upper-cased as the upper
// function makes it.
func publishKeyed(t *testing.T, js jetstream.JetStream, subject string, from, to, keys int, want map[string]string) {
	t.Helper()
	for i := from; i < to; i++ {
		v := fmt.Sprintf(`{"k":"k%d","v":%d}`, i%keys, i)
		if _, err := js.Publish(context.Background(), subject, []byte(v)); err != nil {
			t.Fatal(err)
		}
		want[fmt.Sprintf("k%d", i%keys)] = strings.ToUpper(v)
	}
}

const kvViewJob = `
name: view
parallelism: 2
checkpoint: {interval: 50ms}
restart: {strategy: fixed_delay, delay: 10ms}
on_udf_error: %s
sources: [{id: in, jetstream: {stream: IN}}]
operators: [{id: up, input: in, key_by: {field: k}, map: {module: %s, function: upper}}]
sinks: [{id: view, input: up, kv: {bucket: VIEW}}]
`

// A materialized view through the exactly-once KV sink: each key ends with
// its last value, across a restart of the platform from its checkpoint; a
// record whose key is no KV key is skipped by on_udf_error and counted.
func TestKVSinkMaterializedViewJob(t *testing.T) {
	p := newRecoveryPlatform(t)
	ctx := context.Background()
	mod, err := p.m.UploadModule(ctx, wasmbuild.UDF(t, "upper-wat"))
	if err != nil {
		t.Fatal(err)
	}
	p.stream("IN", "in")
	createBucket(t, p.js, "VIEW")
	want := map[string]string{}
	publishKeyed(t, p.js, "in", 0, 300, 20, want)
	if _, err := p.js.Publish(ctx, "in", []byte(`{"k":"not a key","v":0}`)); err != nil {
		t.Fatal(err)
	}
	info, err := p.m.SubmitJob(ctx, fmt.Appendf(nil, kvViewJob, "skip", mod.ID))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first values", func() bool { return maps.Equal(kvValues(t, p.js, "VIEW"), want) })
	if got := vertexInfo(p.info(info.ID), "view"); got.Skipped != 1 {
		t.Fatalf("sink skipped %d records, want the bad key's 1", got.Skipped)
	}
	p.stop()
	publishKeyed(t, p.js, "in", 300, 600, 30, want)
	p.start()
	waitFor(t, "the values after the restart", func() bool { return maps.Equal(kvValues(t, p.js, "VIEW"), want) })
	time.Sleep(200 * time.Millisecond)
	if got := kvValues(t, p.js, "VIEW"); !maps.Equal(got, want) {
		t.Fatalf("bucket %v, want %v", got, want)
	}
	if info := p.info(info.ID); info.State != StateRunning {
		t.Fatalf("job %s: %s", info.State, info.Failure)
	}
}

// Without checkpoints the KV sink writes at once; under on_udf_error: fail
// a record whose key is no KV key fails the job, naming the sink and key.
func TestKVSinkBadKeyFailsJob(t *testing.T) {
	m, js := newJetStreamManager(t)
	ctx := context.Background()
	mod, err := m.UploadModule(ctx, wasmbuild.UDF(t, "upper-wat"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in"}}); err != nil {
		t.Fatal(err)
	}
	createBucket(t, js, "VIEW")
	want := map[string]string{}
	publishKeyed(t, js, "in", 0, 10, 3, want)
	runJob(t, m, fmt.Sprintf(`
name: view
sources: [{id: in, jetstream: {stream: IN, bounded: true}}]
operators: [{id: up, input: in, key_by: {field: k}, map: {module: %s, function: upper}}]
sinks: [{id: view, input: up, kv: {bucket: VIEW}}]
`, mod.ID))
	if got := kvValues(t, js, "VIEW"); !maps.Equal(got, want) {
		t.Fatalf("bucket %v, want %v", got, want)
	}
	if _, err := js.Publish(ctx, "in", []byte(`{"k":"a..b","v":0}`)); err != nil {
		t.Fatal(err)
	}
	info, err := m.SubmitJob(ctx, fmt.Appendf(nil, `
name: bad
sources: [{id: in, jetstream: {stream: IN, bounded: true}}]
operators: [{id: up, input: in, key_by: {field: k}, map: {module: %s, function: upper}}]
sinks: [{id: view, input: up, kv: {bucket: VIEW}}]
`, mod.ID))
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	info, err = m.WaitJob(wctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if info.State != StateFailed || !strings.Contains(info.Failure, `operator[view]: record (key "a..b"`) || !strings.Contains(info.Failure, "is not a KV key") {
		t.Fatalf("job %s: %s; want it failed on the key", info.State, info.Failure)
	}
}

// Under on_udf_error: dead_letter a record whose key is no KV key goes to
// the dead-letter subject with the error, the others to the bucket.
func TestKVSinkBadKeyDeadLettered(t *testing.T) {
	m, js := newJetStreamManager(t)
	ctx := context.Background()
	mod, err := m.UploadModule(ctx, wasmbuild.UDF(t, "upper-wat"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []jetstream.StreamConfig{{Name: "IN", Subjects: []string{"in"}}, {Name: "DLQ", Subjects: []string{"dlq"}}} {
		if _, err := js.CreateStream(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	createBucket(t, js, "VIEW")
	want := map[string]string{}
	publishKeyed(t, js, "in", 0, 6, 2, want)
	if _, err := js.Publish(ctx, "in", []byte(`{"k":"","v":9}`)); err != nil {
		t.Fatal(err)
	}
	runJob(t, m, fmt.Sprintf(`
name: dlq
checkpoint: {interval: 50ms}
on_udf_error: dead_letter
dead_letter_subject: dlq
sources: [{id: in, jetstream: {stream: IN, bounded: true}}]
operators: [{id: up, input: in, key_by: {field: k}, map: {module: %s, function: upper}}]
sinks: [{id: view, input: up, kv: {bucket: VIEW}}]
`, mod.ID))
	if got := kvValues(t, js, "VIEW"); !maps.Equal(got, want) {
		t.Fatalf("bucket %v, want %v", got, want)
	}
	st, err := js.Stream(ctx, "DLQ")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := st.GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if string(msg.Data) != `{"K":"","V":9}` || !strings.Contains(msg.Header.Get("Platform-Error"), `key "" is not a KV key`) ||
		msg.Header.Get("Platform-Operator") != "view" {
		t.Fatalf("dead letter %q %v", msg.Data, msg.Header)
	}
	if info, err := st.Info(ctx); err != nil || info.State.Msgs != 1 {
		t.Fatalf("dead letters: %v %v, want 1", info.State.Msgs, err)
	}
}
