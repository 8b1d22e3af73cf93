package connector

import (
	"errors"
	"maps"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// On a bucket of three replicas a fenced KV sink commits through atomic
// batches under its fence; once another worker took the fence, the first
// one's commit is refused whole and the bucket keeps the new owner's
// values.
func TestFencedKVTxSinkOnCluster(t *testing.T) {
	c := startCluster(t, 3)
	if _, err := c.js[0].CreateKeyValue(testCtx(t), jetstream.KeyValueConfig{Bucket: "mv", Replicas: 3, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	subject := KVFilter("mv", "")
	fence := func(js jetstream.JetStream) *Fence {
		f, err := TakeFence(testCtx(t), js, subject, "job.mv.0")
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	open := func(js jetstream.JetStream, f *Fence) *TxSink {
		s, err := NewKVTxSink(testCtx(t), js, KVTxSinkConfig{Bucket: "mv", Prefix: "job.mv.0", Fence: f})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	first := open(c.js[1], fence(c.js[1]))
	if err := commitEpoch(t, first, 1, kvRecs("a", "1", "b", "2", "a", "3")); err != nil {
		t.Fatal(err)
	}
	owner := open(c.js[2], fence(c.js[2]))
	if err := commitEpoch(t, first, 2, kvRecs("a", "stale", "c", "stale")); !errors.Is(err, ErrFenced) {
		t.Fatalf("the zombie's commit: %v, want ErrFenced", err)
	}
	if err := commitEpoch(t, owner, 2, kvRecs("b", "-", "c", "4")); err != nil {
		t.Fatal(err)
	}
	if got, want := bucketValues(t, c.js[0], "mv"), map[string]string{"a": "3", "c": "4"}; !maps.Equal(got, want) {
		t.Fatalf("bucket %v, want %v", got, want)
	}
}
