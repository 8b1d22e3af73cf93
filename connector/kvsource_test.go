package connector

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

// kvGot is a record of a KV source: "key=value op".
func kvGot(t *testing.T, src Source, n int, bounded bool) []string {
	t.Helper()
	var out []string
	var b abi.Batch
	for empty := 0; len(out) < n || bounded; {
		b.Reset()
		limit := 100
		if !bounded {
			limit = n - len(out)
		}
		err := src.Fetch(testCtx(t), &b, limit, time.Second)
		for i := range b.Records {
			r := &b.Records[i]
			op := ""
			for _, h := range r.Headers {
				if string(h.Name) == HeaderOp {
					op = string(h.Value)
				}
			}
			if len(r.Headers) != 1 || r.Timestamp <= 0 {
				t.Fatalf("record %q: headers %v, timestamp %d: want one header and the entry's time", r.Key, r.Headers, r.Timestamp)
			}
			out = append(out, fmt.Sprintf("%s=%s %s", r.Key, r.Value, op))
		}
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.Len() == 0 {
			if empty++; empty == 3 {
				t.Fatalf("got %d records %v, want %d", len(out), out, n)
			}
		}
	}
	return out
}

func newBucket(t *testing.T, ts *testServer, name string, history uint8) jetstream.KeyValue {
	t.Helper()
	kv, err := ts.js.CreateKeyValue(testCtx(t), jetstream.KeyValueConfig{Bucket: name, History: history})
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func put(t *testing.T, kv jetstream.KeyValue, pairs ...string) {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if _, err := kv.PutString(testCtx(t), pairs[i], pairs[i+1]); err != nil {
			t.Fatal(err)
		}
	}
}

// The KV source reads each key's current entry first (deleted keys as
// deletes), in stream order, then every update; a restore from its
// positions resumes exactly after them, also with values superseded in
// between, which are no gap.
func TestKVSourceCurrentEntriesThenUpdates(t *testing.T) {
	ts := startServer(t)
	kv := newBucket(t, ts, "profiles", 1)
	put(t, kv, "u1", "a", "u2", "b", "u1", "c", "u3", "d")
	if err := kv.Delete(testCtx(t), "u3"); err != nil {
		t.Fatal(err)
	}
	src, err := NewKVSource(testCtx(t), ts.js, KVSourceConfig{Bucket: "profiles", Subtask: 0, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"u2=b put", "u1=c put", "u3= delete"}
	if got := kvGot(t, src, 3, false); !slices.Equal(got, want) {
		t.Fatalf("current entries %v, want %v", got, want)
	}
	put(t, kv, "u4", "e")
	if err := kv.Purge(testCtx(t), "u2"); err != nil {
		t.Fatal(err)
	}
	want = []string{"u4=e put", "u2= delete"}
	if got := kvGot(t, src, 2, false); !slices.Equal(got, want) {
		t.Fatalf("updates %v, want %v", got, want)
	}
	pos := src.Positions()
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if src.Lag() != 0 {
		t.Fatalf("lag %d, want 0", src.Lag())
	}
	// While the source is down u4 changes twice and u5 appears: the
	// resumed source reads what the bucket holds after its position.
	put(t, kv, "u4", "f", "u5", "g", "u4", "h")
	src, err = NewKVSource(testCtx(t), ts.js, KVSourceConfig{Bucket: "profiles", Subtask: 0, Parallelism: 1, Start: pos})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	want = []string{"u5=g put", "u4=h put"}
	if got := kvGot(t, src, 2, false); !slices.Equal(got, want) {
		t.Fatalf("after restore %v, want %v", got, want)
	}
}

// A key filter reads only the matching keys; another subtask reads nothing.
func TestKVSourceKeysFilter(t *testing.T) {
	ts := startServer(t)
	kv := newBucket(t, ts, "cfg", 1)
	put(t, kv, "eu.a", "1", "us.b", "2", "eu.c", "3")
	src, err := NewKVSource(testCtx(t), ts.js, KVSourceConfig{Bucket: "cfg", Keys: "eu.*", Bounded: true, Subtask: 0, Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if got, want := kvGot(t, src, 0, true), []string{"eu.a=1 put", "eu.c=3 put"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	other, err := NewKVSource(testCtx(t), ts.js, KVSourceConfig{Bucket: "cfg", Keys: "eu.*", Bounded: true, Subtask: 1, Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if got := kvGot(t, other, 0, true); len(got) != 0 {
		t.Fatalf("subtask 1 read %v", got)
	}
}

// A bounded source reads the entries present at start, without deletes
// and without later updates, and ends; with a bucket keeping history it
// still reads each key's last value only.
func TestKVSourceBounded(t *testing.T) {
	ts := startServer(t)
	kv := newBucket(t, ts, "hist", 5)
	put(t, kv, "a", "1", "b", "2", "a", "3", "c", "4")
	if err := kv.Delete(testCtx(t), "c"); err != nil {
		t.Fatal(err)
	}
	end, err := KVBoundedEnd(testCtx(t), ts.js, "hist", "")
	if err != nil {
		t.Fatal(err)
	}
	put(t, kv, "d", "5")
	src, err := NewKVSource(testCtx(t), ts.js, KVSourceConfig{Bucket: "hist", Bounded: true, End: end, Subtask: 0, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := kvGot(t, src, 0, true)
	if want := []string{"b=2 put", "a=3 put"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	pos := src.Positions()
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	// Restored at its end, it has nothing more to read.
	src, err = NewKVSource(testCtx(t), ts.js, KVSourceConfig{Bucket: "hist", Bounded: true, End: end, Start: pos, Subtask: 0, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if got := kvGot(t, src, 0, true); len(got) != 0 {
		t.Fatalf("restored at the end read %v", got)
	}
}

// A bounded source restored before its end, after an entry it had not
// read changed, reads on to the bucket's end at the restore: the entry's
// new value comes instead of nothing, and the positions keep that end.
func TestKVSourceBoundedRestoreReadsChangedEntries(t *testing.T) {
	ts := startServer(t)
	kv := newBucket(t, ts, "snap", 1)
	put(t, kv, "a", "1", "b", "2", "c", "3")
	end, err := KVBoundedEnd(testCtx(t), ts.js, "snap", "")
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewKVSource(testCtx(t), ts.js, KVSourceConfig{Bucket: "snap", Bounded: true, End: end, Subtask: 0, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := kvGot(t, src, 1, false); !slices.Equal(got, []string{"a=1 put"}) {
		t.Fatalf("first record %v", got)
	}
	pos := src.Positions()
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	put(t, kv, "b", "22")
	src, err = NewKVSource(testCtx(t), ts.js, KVSourceConfig{Bucket: "snap", Bounded: true, End: end, Start: pos, Subtask: 0, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if got, want := kvGot(t, src, 0, true), []string{"c=3 put", "b=22 put"}; !slices.Equal(got, want) {
		t.Fatalf("after restore %v, want %v", got, want)
	}
	filter := KVFilter("snap", ">")
	if p := src.Positions(); p[filter] != 4 || p[filter+kvEndSuffix] != 4 {
		t.Fatalf("positions %v, want %s at 4 with its end 4", p, filter)
	}
}

func TestKVSourceErrors(t *testing.T) {
	ts := startServer(t)
	_, err := NewKVSource(testCtx(t), ts.js, KVSourceConfig{Bucket: "missing", Parallelism: 1})
	if !errors.Is(err, ErrNoBucket) {
		t.Fatalf("missing bucket: %v, want ErrNoBucket", err)
	}
	for _, b := range []string{"", "a.b", "a b"} {
		if _, err := NewKVSource(testCtx(t), ts.js, KVSourceConfig{Bucket: b, Parallelism: 1}); err == nil {
			t.Errorf("bucket %q: no error", b)
		}
	}
	newBucket(t, ts, "ok", 1)
	if _, err := NewKVSource(testCtx(t), ts.js, KVSourceConfig{Bucket: "ok", Keys: "a..b", Parallelism: 1}); err == nil {
		t.Error("keys a..b: no error")
	}
}

func TestValidKVKey(t *testing.T) {
	for key, want := range map[string]bool{
		"a": true, "user.1": true, "a/b=c_d-e": true, "A9": true,
		"": false, ".a": false, "a.": false, "a..b": false, "a b": false, "a*": false, "a>": false, "é": false,
	} {
		if got := ValidKVKey([]byte(key)); got != want {
			t.Errorf("ValidKVKey(%q) = %v, want %v", key, got, want)
		}
	}
	for keys, want := range map[string]bool{
		">": true, "a.*": true, "*.b.>": true, "a": true,
		"": false, "a.>.b": false, "a..b": false, "a*": false,
	} {
		if got := ValidKVKeys(keys); got != want {
			t.Errorf("ValidKVKeys(%q) = %v, want %v", keys, got, want)
		}
	}
}
