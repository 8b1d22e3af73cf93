package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// streamRecords reads every message of a stream as "key=value op", the
// key and op from the Platform-Key and Platform-Op headers a sink adds.
func streamRecords(t *testing.T, js jetstream.JetStream, name string) []string {
	t.Helper()
	var out []string
	for _, m := range streamMessages(t, js, name) {
		out = append(out, fmt.Sprintf("%s=%s %s", m.Header.Get("Platform-Key"), m.Data, m.Header.Get("Platform-Op")))
	}
	return out
}

func createBucket(t *testing.T, js jetstream.JetStream, name string) jetstream.KeyValue {
	t.Helper()
	kv, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: name, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func putKV(t *testing.T, kv jetstream.KeyValue, pairs ...string) {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if _, err := kv.PutString(context.Background(), pairs[i], pairs[i+1]); err != nil {
			t.Fatal(err)
		}
	}
}

// A bounded KV source reads the bucket's entries present at start, with
// their keys and Platform-Op, and the job finishes.
func TestKVSourceBoundedJob(t *testing.T) {
	m, js := newJetStreamManager(t)
	kv := createBucket(t, js, "PROFILES")
	putKV(t, kv, "u1", `{"tier":"gold"}`, "u2", `{"tier":"blue"}`, "u1", `{"tier":"jade"}`, "u3", "x")
	if err := kv.Delete(context.Background(), "u3"); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{Name: "OUT", Subjects: []string{"out"}}); err != nil {
		t.Fatal(err)
	}
	runJob(t, m, `
name: kvread
sources: [{id: ref, kv: {bucket: PROFILES, bounded: true}}]
sinks: [{id: out, input: ref, jetstream: {subject: out}}]
`)
	want := []string{`u2={"tier":"blue"} put`, `u1={"tier":"jade"} put`}
	if got := streamRecords(t, js, "OUT"); !slices.Equal(got, want) {
		t.Fatalf("output %v, want %v", got, want)
	}
}

// An unbounded KV source in an exactly-once job: current entries, then
// updates and deletes; the platform restarts on the same data directory
// and the job goes on from its checkpoint: every change once, in order.
func TestKVSourceResumesJob(t *testing.T) {
	p := newRecoveryPlatform(t)
	kv := createBucket(t, p.js, "CFG")
	putKV(t, kv, "a", "1", "b", "2")
	p.stream("OUT", "out")
	info, err := p.m.SubmitJob(context.Background(), []byte(`
name: kvfollow
checkpoint: {interval: 50ms}
sources: [{id: cfg, kv: {bucket: CFG}}]
sinks: [{id: out, input: cfg, jetstream: {subject: out}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the current entries", func() bool { return len(streamValues(t, p.js, "OUT")) >= 2 })
	putKV(t, kv, "a", "3")
	if err := kv.Delete(context.Background(), "b"); err != nil {
		t.Fatal(err)
	}
	p.checkpointed(info.ID, 4)
	p.stop()
	putKV(t, kv, "c", "4")
	p.start()
	waitFor(t, "5 records out", func() bool { return len(streamValues(t, p.js, "OUT")) >= 5 })
	time.Sleep(200 * time.Millisecond)
	want := []string{"a=1 put", "b=2 put", "a=3 put", "b= delete", "c=4 put"}
	if got := streamRecords(t, p.js, "OUT"); !slices.Equal(got, want) {
		t.Fatalf("output %v, want %v", got, want)
	}
}

// A job naming a bucket that does not exist is refused at submission,
// naming the field and how to create the bucket.
func TestKVMissingBucketRefused(t *testing.T) {
	m, _ := newJetStreamManager(t)
	_, err := m.SubmitJob(context.Background(), []byte(`
name: nobucket
sources: [{id: ref, kv: {bucket: NOPE}}]
sinks: [{id: out, input: ref, kv: {bucket: NOPE2}}]
`))
	var je *JobError
	if !errors.As(err, &je) || !errors.Is(err, ErrInvalidJob) {
		t.Fatalf("got %v, want an invalid job", err)
	}
	var paths []string
	for _, p := range je.Problems {
		paths = append(paths, p.Path)
		if !strings.Contains(p.Message, "no KV bucket") || !strings.Contains(p.Message, "nats kv add") {
			t.Errorf("%s: %s", p.Path, p.Message)
		}
	}
	if want := []string{"sources[0].kv.bucket", "sinks[0].kv.bucket"}; !slices.Equal(paths, want) {
		t.Fatalf("problems at %v, want %v: %v", paths, want, err)
	}
}
