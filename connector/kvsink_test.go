package connector

import (
	"context"
	"errors"
	"io"
	"maps"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

// kvRec is a record for a KV sink: delete when value is "-".
func kvRec(key, value string) abi.Record {
	r := abi.Record{Key: []byte(key), Value: []byte(value), Timestamp: 7}
	if value == "-" {
		r.Value = nil
		r.Headers = []abi.Header{{Name: []byte(HeaderOp), Value: []byte(OpDelete)}}
	}
	return r
}

func kvRecs(pairs ...string) []abi.Record {
	var out []abi.Record
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, kvRec(pairs[i], pairs[i+1]))
	}
	return out
}

// bucketValues is every key of a bucket with its value.
func bucketValues(t *testing.T, js jetstream.JetStream, bucket string) map[string]string {
	t.Helper()
	ctx := testCtx(t)
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

// bucketWrites is the number of messages ever written to a bucket.
func bucketWrites(t *testing.T, js jetstream.JetStream, bucket string) uint64 {
	t.Helper()
	st, err := js.Stream(testCtx(t), KVStream(bucket))
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.LastSeq
}

// The at-least-once KV sink puts and deletes as records come, and a bad
// record fails Write after those before it.
func TestKVSinkWrites(t *testing.T) {
	ts := startServer(t)
	newBucket(t, ts, "view", 1)
	ctx := testCtx(t)
	s, err := NewKVSink(ctx, ts.js, KVSinkConfig{Bucket: "view"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Write(ctx, kvRecs("a", "1", "b", "2", "a", "3", "b", "-", "c.d", "4")); err != nil {
		t.Fatal(err)
	}
	err = s.Write(ctx, kvRecs("e", "5", "bad key", "6", "f", "7"))
	if !errors.Is(err, ErrBadKVRecord) {
		t.Fatalf("bad key: %v, want ErrBadKVRecord", err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "3", "c.d": "4", "e": "5"}
	if got := bucketValues(t, ts.js, "view"); !maps.Equal(got, want) {
		t.Fatalf("bucket %v, want %v", got, want)
	}
	bad := abi.Record{Key: []byte("k"), Headers: []abi.Header{{Name: []byte(HeaderOp), Value: []byte("upsert")}}}
	if err := CheckKVRecord(&bad); !errors.Is(err, ErrBadKVRecord) {
		t.Fatalf("op upsert: %v, want ErrBadKVRecord", err)
	}
	if _, err := NewKVSink(ctx, ts.js, KVSinkConfig{Bucket: "none"}); !errors.Is(err, ErrNoBucket) {
		t.Fatalf("missing bucket: %v, want ErrNoBucket", err)
	}
}

// The exactly-once KV sink writes nothing before a commit, and a commit
// writes the last record of each key of its epoch only.
func TestKVTxSinkCommitsLastPerKey(t *testing.T) {
	ts := startServer(t)
	newBucket(t, ts, "mv", 1)
	ctx := testCtx(t)
	s, err := NewKVTxSink(ctx, ts.js, KVTxSinkConfig{Bucket: "mv", Prefix: "job.mv.0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Write(ctx, kvRecs("a", "1", "b", "2", "a", "3", "c", "9")); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, kvRecs("c", "-", "b", "4")); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal(2); err != nil {
		t.Fatal(err)
	}
	if got := bucketWrites(t, ts.js, "mv"); got != 0 {
		t.Fatalf("%d writes before a commit", got)
	}
	if err := s.Commit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := bucketValues(t, ts.js, "mv"), map[string]string{"a": "3", "b": "2", "c": "9"}; !maps.Equal(got, want) {
		t.Fatalf("after checkpoint 1: %v, want %v", got, want)
	}
	if got := bucketWrites(t, ts.js, "mv"); got != 3 {
		t.Fatalf("checkpoint 1 wrote %d messages, want 3 (one per key)", got)
	}
	if err := s.Commit(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := bucketValues(t, ts.js, "mv"), map[string]string{"a": "3", "b": "4"}; !maps.Equal(got, want) {
		t.Fatalf("after checkpoint 2: %v, want %v", got, want)
	}
	if err := s.Write(ctx, kvRecs("ok", "1", "", "2")); !errors.Is(err, ErrBadKVRecord) {
		t.Fatalf("empty key: %v, want ErrBadKVRecord", err)
	}
}

// A recovery after the server restarted, which forgets the ids of values
// the bucket no longer holds, recommits two epochs that were both stored:
// the bucket keeps the later values. Committed one by one and in full,
// the replay would store a's first value again (its id is no longer known)
// and drop the second as a duplicate.
func TestKVTxSinkRecoverAfterServerRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	start := func() (*Embedded, *nats.Conn, jetstream.JetStream) {
		srv, err := StartEmbedded(ctx, EmbeddedConfig{DataDir: dir, Port: -1})
		if err != nil {
			t.Fatal(err)
		}
		nc, js, err := Connect(ctx, srv.ClientURL(), t.Name())
		if err != nil {
			t.Fatal(err)
		}
		return srv, nc, js
	}
	srv, nc, js := start()
	if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "mv", Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	s, err := NewKVTxSink(ctx, js, KVTxSinkConfig{Bucket: "mv", Prefix: "job.mv.0"})
	if err != nil {
		t.Fatal(err)
	}
	for id, recs := range [][]abi.Record{kvRecs("a", "1", "b", "1"), kvRecs("a", "2")} {
		if err := s.Write(ctx, recs); err != nil {
			t.Fatal(err)
		}
		if err := s.Seal(int64(id + 1)); err != nil {
			t.Fatal(err)
		}
	}
	// The checkpoint holds both epochs; their commits then complete.
	r, release, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	snap := readAll(t, r)
	release()
	if err := s.Commit(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	nc.Close()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	srv, nc, js = start()
	defer func() { nc.Close(); _ = srv.Shutdown(context.Background()) }()
	epochs, err := DecodeEpochs(snap)
	if err != nil {
		t.Fatal(err)
	}
	s, err = NewKVTxSink(ctx, js, KVTxSinkConfig{Bucket: "mv", Prefix: "job.mv.0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := s.Recover(ctx, epochs, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if st.Published != 2 || st.Skipped != 1 {
		t.Fatalf("recover %+v, want 2 published (b, a's last) and 1 skipped (a's first)", st)
	}
	if got, want := bucketValues(t, js, "mv"), map[string]string{"a": "2", "b": "1"}; !maps.Equal(got, want) {
		t.Fatalf("bucket %v, want %v", got, want)
	}
}

// Beyond the duplicate window a recovery reads the bucket back: the last
// write of each key found stored is not sent again.
func TestKVTxSinkRecoverReadsBack(t *testing.T) {
	ts := startServer(t)
	newBucket(t, ts, "mv", 1)
	ctx := testCtx(t)
	s, err := NewKVTxSink(ctx, ts.js, KVTxSinkConfig{Bucket: "mv", Prefix: "job.mv.0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, kvRecs("a", "1", "b", "1", "a", "2")); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal(1); err != nil {
		t.Fatal(err)
	}
	epochs := snapshotEpochs(t, s)
	if err := s.Commit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	// The commit began "long ago": past the two minutes of the bucket's
	// duplicate window.
	epochs[0].Since = time.Now().Add(-10 * time.Minute)
	s, err = NewKVTxSink(ctx, ts.js, KVTxSinkConfig{Bucket: "mv", Prefix: "job.mv.0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := s.Recover(ctx, epochs, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !st.ReadBack || st.Published != 0 {
		t.Fatalf("recover %+v, want a read-back and nothing published", st)
	}
	if got := bucketWrites(t, ts.js, "mv"); got != 2 {
		t.Fatalf("%d writes, want the 2 of the first commit", got)
	}
}

// In cluster mode a KV sink commits under a fence on the bucket's stream,
// and the owner it fenced out stores nothing.
func TestKVTxSinkFenced(t *testing.T) {
	ts := startServer(t)
	newBucket(t, ts, "mv", 1)
	ctx := testCtx(t)
	subject := KVFilter("mv", "")
	old, err := TakeFence(ctx, ts.js, subject, "job.mv.0")
	if err != nil {
		t.Fatal(err)
	}
	zombie, err := NewKVTxSink(ctx, ts.js, KVTxSinkConfig{Bucket: "mv", Prefix: "job.mv.0", Fence: old})
	if err != nil {
		t.Fatal(err)
	}
	defer zombie.Close()
	taken, err := TakeFence(ctx, ts.js, subject, "job.mv.0")
	if err != nil {
		t.Fatal(err)
	}
	owner, err := NewKVTxSink(ctx, ts.js, KVTxSinkConfig{Bucket: "mv", Prefix: "job.mv.0", Fence: taken})
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	commit := func(s *TxSink, recs []abi.Record) error {
		if err := s.Write(ctx, recs); err != nil {
			return err
		}
		if err := s.Seal(1); err != nil {
			return err
		}
		if err := s.Commit(ctx, 1); err != nil {
			return err
		}
		return s.Flush(ctx)
	}
	if err := commit(owner, kvRecs("a", "new", "b", "new", "a", "newer")); err != nil {
		t.Fatal(err)
	}
	if err := commit(zombie, kvRecs("a", "old")); !errors.Is(err, ErrFenced) {
		t.Fatalf("zombie commit: %v, want ErrFenced", err)
	}
	if got, want := bucketValues(t, ts.js, "mv"), map[string]string{"a": "newer", "b": "new"}; !maps.Equal(got, want) {
		t.Fatalf("bucket %v, want %v", got, want)
	}
	// A one-replica bucket's stream takes the fenced commit message by
	// message, each expecting the fence, not in atomic batches.
	if b := owner.Batches(); b != (BatchStats{}) {
		t.Fatalf("owner batches %+v, want none on a one-replica stream", b)
	}
}

func readAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
