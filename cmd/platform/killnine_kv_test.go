package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
)

// bucketEntries is every key of a bucket with its value.
func bucketEntries(t *testing.T, js jetstream.JetStream, bucket string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kv, err := js.KeyValue(ctx, bucket)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k := range keys.Keys() {
		e, err := kv.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = string(e.Value())
	}
	return out
}

// TestKillNineKVSink runs a materialized view (seqcheck's track, keyed per
// key, into two exactly-once KV sinks: VIEW keeping one value per key, HIST
// 64) over 300,000 records in a separate platform process, SIGKILLing the
// process (and its embedded NATS server) at six random points of its
// progress and restarting
// it on the same data directory. Both buckets end with exactly the values
// an uninterrupted run leaves (each key's last output, with the state the
// key had before it), and no key's value ever went back: the values HIST
// kept of each key do not fall.
func TestKillNineKVSink(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills platform processes")
	}
	c, js, closeNATS := startChild(t)
	ctx := context.Background()
	const keys, perKey = 1000, 300
	// Key after key: each key's records end early in the run, so that a
	// write of a key that a replay undid would stay undone.
	var payloads [][]byte
	for k := range keys {
		for s := 1; s <= perKey; s++ {
			payloads = append(payloads, fmt.Appendf(nil, `{"k":"key%d","s":%d}`, k, s))
		}
	}
	subject := func(i int) string { return fmt.Sprintf("in.%d", i/perKey%4) }
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	for bucket, history := range map[string]uint8{"VIEW": 1, "HIST": 64} {
		if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bucket, History: history, Storage: jetstream.FileStorage}); err != nil {
			t.Fatal(err)
		}
	}
	publishAll(t, js, payloads, subject)
	mod := c.upload(wasmbuild.UDF(t, "seqcheck"))
	job := c.submit(fmt.Sprintf(`
name: kv-view
parallelism: 2
checkpoint: {interval: 200ms, mode: exactly_once}
restart: {strategy: fixed_delay, delay: 100ms}
sources: [{id: in, jetstream: {stream: IN, subjects: ["in.0", "in.1", "in.2", "in.3"], bounded: true}}]
operators: [{id: track, input: in, key_by: {field: k}, process: {module: %s, function: track}}]
sinks:
  - {id: view, input: track, kv: {bucket: VIEW}}
  - {id: hist, input: track, kv: {bucket: HIST}}
`, mod.ID))
	// VIEW holds one message per key written so far: the keys come one
	// after the other, so that it counts the progress.
	const kills = 6
	js, closeNATS = c.killAtRandom(job, "KV_VIEW", keys, kills, js, closeNATS)
	defer closeNATS()
	want := map[string]string{}
	for k := range keys {
		want[fmt.Sprintf("key%d", k)] = fmt.Sprintf(`{"k":"key%d","s":%d,"p":%d}`, k, perKey, perKey-1)
	}
	for _, bucket := range []string{"VIEW", "HIST"} {
		got := bucketEntries(t, js, bucket)
		if maps.Equal(got, want) {
			continue
		}
		wrong := 0
		for k, v := range want {
			if got[k] != v {
				if wrong++; wrong <= 5 {
					t.Errorf("%s %s = %q, want %q", bucket, k, got[k], v)
				}
			}
		}
		t.Fatalf("%s: %d keys of %d wrong (bucket has %d keys) after %d kills", bucket, wrong, keys, len(got), kills)
	}
	// The history HIST kept: per key, sequence numbers that never fall.
	last := map[string]int64{}
	ts := &testServer{t: t, js: js}
	for _, m := range ts.read("KV_HIST") {
		key, ok := strings.CutPrefix(m.Subject(), "$KV.HIST.")
		if !ok {
			continue
		}
		var o seqOutput
		if err := json.Unmarshal(m.Data(), &o); err != nil {
			t.Fatalf("%s: %q: %v", key, m.Data(), err)
		}
		if o.S < last[key] {
			t.Fatalf("%s went from s=%d back to s=%d", key, last[key], o.S)
		}
		last[key] = o.S
	}
	t.Logf("%d kills; %d keys exact in both buckets", kills, len(want))
}
