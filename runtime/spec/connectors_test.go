package spec

import (
	"strings"
	"testing"
)

// The kv, nats and object_store blocks default, and each rule names its
// field.
func TestConnectorSpecs(t *testing.T) {
	j, err := Parse([]byte(`
name: c
checkpoint: {interval: 1s, mode: at_least_once}
sources:
  - {id: ref, kv: {bucket: REF}}
  - {id: core, nats: {subject: "in.>", queue: q}}
sinks:
  - {id: view, input: ref, kv: {bucket: VIEW}}
  - {id: fan, input: core, nats: {subject: out}}
  - {id: files, input: ref, object_store: {bucket: FILES, prefix: a/b}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if kv := j.Sources[0].KV; kv.Keys != ">" || kv.Bounded {
		t.Errorf("kv source %+v, want keys > unbounded", kv)
	}
	if j.Sinks[0].KV.MaxInFlight != 4096 || j.Sinks[2].ObjectStore.Format != "jsonl" {
		t.Errorf("sink defaults %+v %+v", j.Sinks[0].KV, j.Sinks[2].ObjectStore)
	}
	tests := []struct {
		name, spec, path, msg string
	}{
		{"two kinds", "name: j\nsources: [{id: src, kv: {bucket: B}, generator: {kind: sequence}}]\n" + out,
			"sources[0]", "set one of jetstream, generator, kv, nats or test_stream, not several"},
		{"bad bucket", "name: j\nsources: [{id: src, kv: {bucket: a.b}}]\n" + out, "sources[0].kv.bucket", `want letters, digits, '-' and '_', got "a.b"`},
		{"bad keys", "name: j\nsources: [{id: src, kv: {bucket: B, keys: 'a..b'}}]\n" + out, "sources[0].kv.keys", "a key filter has no empty tokens"},
		{"bad key chars", "name: j\nsources: [{id: src, kv: {bucket: B, keys: 'a b'}}]\n" + out, "sources[0].kv.keys", "a key filter's tokens"},
		{"kv sink partition", "name: j\n" + src + "sinks: [{id: out, input: src, partition: rebalance, kv: {bucket: B}}]\n",
			"sinks[0].partition", "a kv sink's input is always partitioned by the record key"},
		{"nats source in exactly once", "name: j\ncheckpoint: {interval: 1s}\nsources: [{id: src, nats: {subject: a}}]\n" + out,
			"sources[0].nats", "core NATS is at most once: a source on it loses the messages in flight at a failure"},
		{"nats sink in exactly once", "name: j\ncheckpoint: {interval: 1s}\n" + src + "sinks: [{id: out, input: src, nats: {subject: a}}]\n",
			"sinks[0].nats", "set allow_at_most_once: true to accept that"},
		{"nats sink wildcard", "name: j\n" + src + "sinks: [{id: out, input: src, nats: {subject: 'a.*'}}]\n",
			"sinks[0].nats.subject", "must not contain wildcards"},
		{"nats queue", "name: j\nsources: [{id: src, nats: {subject: a, queue: 'a b'}}]\n" + out,
			"sources[0].nats.queue", "a queue group name has no spaces"},
		{"object store without checkpoints", "name: j\n" + src + "sinks: [{id: out, input: src, object_store: {bucket: B}}]\n",
			"sinks[0].object_store", "needs checkpoint"},
		{"object prefix", "name: j\ncheckpoint: {interval: 1s}\n" + src + "sinks: [{id: out, input: src, object_store: {bucket: B, prefix: /a}}]\n",
			"sinks[0].object_store.prefix", "neither starts nor ends with '/'"},
		{"object roll", "name: j\ncheckpoint: {interval: 1s}\n" + src + "sinks: [{id: out, input: src, object_store: {bucket: B, roll_bytes: -1, roll_interval: -1s}}]\n",
			"sinks[0].object_store.roll_bytes", "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := problemAt(t, tt.spec, tt.path); !strings.Contains(got, tt.msg) {
				t.Errorf("%s: %q, want %q", tt.path, got, tt.msg)
			}
		})
	}
	// allow_at_most_once admits core NATS into an exactly_once job.
	if _, err := Parse([]byte("name: j\ncheckpoint: {interval: 1s}\nsources: [{id: src, nats: {subject: a, allow_at_most_once: true}}]\n" + out)); err != nil {
		t.Fatal(err)
	}
}
