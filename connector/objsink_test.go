package connector

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

func newObjectBucket(t *testing.T, ts *testServer, name string) jetstream.ObjectStore {
	t.Helper()
	obs, err := ts.js.CreateObjectStore(testCtx(t), jetstream.ObjectStoreConfig{Bucket: name})
	if err != nil {
		t.Fatal(err)
	}
	return obs
}

func newObjectSink(t *testing.T, ts *testServer, cfg ObjectSinkConfig, at time.Time) *ObjectSink {
	t.Helper()
	s, err := NewObjectSink(testCtx(t), ts.js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return at }
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// objectNames lists a bucket's objects, sorted.
func objectNames(t *testing.T, obs jetstream.ObjectStore) []string {
	t.Helper()
	list, err := obs.List(testCtx(t))
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range list {
		out = append(out, o.Name)
	}
	slices.Sort(out)
	return out
}

func objectText(t *testing.T, obs jetstream.ObjectStore, name string) string {
	t.Helper()
	s, err := obs.GetString(testCtx(t), name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

var objAt = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// Records become an object only when their checkpoint commits, as JSON
// lines; the index names the objects of the subtask's last commit.
func TestObjectSinkCommitsPerCheckpoint(t *testing.T) {
	ts := startServer(t)
	obs := newObjectBucket(t, ts, "files")
	ctx := testCtx(t)
	s := newObjectSink(t, ts, ObjectSinkConfig{Bucket: "files", Prefix: "clicks/raw", Writer: "job.out.1", Subtask: 1}, objAt)
	recs := []abi.Record{
		{Key: []byte("u1"), Value: []byte(`{"a": 1,  "b": [1, 2]}`), Timestamp: 10},
		{Key: []byte(`q"\`), Value: []byte("not json\n"), Timestamp: 11},
		{Value: []byte("\xff"), Timestamp: 12},
	}
	if err := s.Write(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal(7); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, recs[:1]); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal(8); err != nil {
		t.Fatal(err)
	}
	if got := objectNames(t, obs); len(got) != 0 || !s.Staged() {
		t.Fatalf("objects %v before a commit", got)
	}
	st, err := s.Commit(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	name := "clicks/raw/20260304T050607-0000000007-1.jsonl"
	if st.Written != 1 || st.Records != 3 || s.Pending() != 1 {
		t.Fatalf("stats %+v, pending %d", st, s.Pending())
	}
	if got, want := objectNames(t, obs), []string{name, "clicks/raw/_index/1.json"}; !slices.Equal(got, want) {
		t.Fatalf("objects %v, want %v", got, want)
	}
	want := `{"key":"u1","value":{"a":1,"b":[1,2]},"timestamp":10}` + "\n" +
		`{"key":"q\"\\","value":"not json\n","timestamp":11}` + "\n" +
		`{"key":"","value":"\ufffd","timestamp":12}` + "\n"
	if got := objectText(t, obs, name); got != want {
		t.Fatalf("object\n%s\nwant\n%s", got, want)
	}
	for _, line := range strings.Split(strings.TrimSpace(want), "\n") {
		if !json.Valid([]byte(line)) {
			t.Fatalf("not JSON: %s", line)
		}
	}
	info, err := obs.GetInfo(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if m := info.Metadata; m["writer"] != "job.out.1" || m["checkpoint"] != "7" || m["records"] != "3" || m["format"] != "jsonl" {
		t.Fatalf("metadata %v", m)
	}
	if got := objectText(t, obs, "clicks/raw/_index/1.json"); got != `{"writer":"job.out.1","subtask":1,"checkpoint":7,"objects":["`+name+`"]}` {
		t.Fatalf("index %s", got)
	}
}

// Rolls start parts within a checkpoint; a recovery writes the restored
// parts again, keeping those whole already and writing the missing one.
func TestObjectSinkRollsAndRecovers(t *testing.T) {
	ts := startServer(t)
	obs := newObjectBucket(t, ts, "files")
	ctx := testCtx(t)
	cfg := ObjectSinkConfig{Bucket: "files", Writer: "job.out.0", RollBytes: 100}
	s := newObjectSink(t, ts, cfg, objAt)
	var recs []abi.Record
	for i := range 10 {
		recs = append(recs, abi.Record{Key: []byte("k"), Value: []byte(strings.Repeat("x", 30)), Timestamp: int64(i)})
	}
	if err := s.Write(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal(3); err != nil {
		t.Fatal(err)
	}
	r, release, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	snap := readAll(t, r)
	release()
	if _, err := s.Commit(ctx, 3); err != nil {
		t.Fatal(err)
	}
	names := objectNames(t, obs)
	if len(names) < 4 || names[0] != "20260304T050607-0000000003-0.jsonl" || names[1] != "20260304T050607-0000000003-0_001.jsonl" {
		t.Fatalf("objects %v, want several parts of checkpoint 3", names)
	}
	lines := 0
	for _, n := range names[:len(names)-1] {
		lines += strings.Count(objectText(t, obs, n), "\n")
	}
	if lines != 10 {
		t.Fatalf("%d records in the parts, want 10", lines)
	}
	first, err := obs.GetInfo(ctx, names[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := obs.Delete(ctx, names[1]); err != nil {
		t.Fatal(err)
	}
	epochs, err := DecodeEpochs(snap)
	if err != nil {
		t.Fatal(err)
	}
	again := newObjectSink(t, ts, cfg, objAt.Add(time.Hour))
	st, err := again.Recover(ctx, epochs)
	if err != nil {
		t.Fatal(err)
	}
	if st.Written != 1 || st.Kept != len(names)-2 {
		t.Fatalf("recover %+v, want 1 written and %d kept", st, len(names)-2)
	}
	if got := objectNames(t, obs); !slices.Equal(got, names) {
		t.Fatalf("objects %v after recovery, want %v", got, names)
	}
	if info, err := obs.GetInfo(ctx, names[0]); err != nil || info.NUID != first.NUID {
		t.Fatalf("a kept object was written again: %v", err)
	}
	// An object of the same name with other content is not replaced.
	if _, err := obs.PutString(ctx, names[0], "other"); err != nil {
		t.Fatal(err)
	}
	epochs, _ = DecodeEpochs(snap)
	if _, err := again.Recover(ctx, epochs); !errors.Is(err, ErrObjectExists) {
		t.Fatalf("other content: %v, want ErrObjectExists", err)
	}
}

// A part rolls once it is RollInterval old when a record arrives.
func TestObjectSinkRollInterval(t *testing.T) {
	ts := startServer(t)
	obs := newObjectBucket(t, ts, "files")
	ctx := testCtx(t)
	s := newObjectSink(t, ts, ObjectSinkConfig{Bucket: "files", Writer: "w", RollInterval: time.Minute}, objAt)
	rec := []abi.Record{{Key: []byte("k"), Value: []byte("1")}}
	for _, at := range []time.Duration{0, 30 * time.Second, 61 * time.Second} {
		s.now = func() time.Time { return objAt.Add(at) }
		if err := s.Write(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Seal(1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	want := []string{"20260304T050607-0000000001-0.jsonl", "20260304T050708-0000000001-0_001.jsonl", "_index/0.json"}
	if got := objectNames(t, obs); !slices.Equal(got, want) {
		t.Fatalf("objects %v, want %v", got, want)
	}
	if _, err := NewObjectSink(ctx, ts.js, ObjectSinkConfig{Bucket: "nope"}); !errors.Is(err, ErrNoBucket) {
		t.Fatalf("missing bucket: %v, want ErrNoBucket", err)
	}
}

// TestObjectSinkSkipCommittedAfterFallback: a sink restored from checkpoint
// 5 because checkpoint 6 is corrupt leaves the object checkpoint 6 wrote
// and drops its records from the replay, which comes under new names (the
// corrupt checkpoint's id is not taken again); a second failure after
// checkpoint 7, mid-replay, keeps dropping the rest from its state. Every
// record is in the bucket once, a record that occurs twice twice.
func TestObjectSinkSkipCommittedAfterFallback(t *testing.T) {
	ts := startServer(t)
	obs := newObjectBucket(t, ts, "files")
	ctx := testCtx(t)
	cfg := ObjectSinkConfig{Bucket: "files", Prefix: "out", Writer: "job.out.0"}
	produced := append(txRecords(0, 300), txRecords(42, 1)[0])
	commit := func(s *ObjectSink, id int64, recs []abi.Record) {
		t.Helper()
		if err := s.Write(ctx, recs); err != nil {
			t.Fatal(err)
		}
		if err := s.Seal(id); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Commit(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	before := newObjectSink(t, ts, cfg, objAt)
	commit(before, 5, produced[:100])
	// Checkpoint 6 wrote v100 ... v199 and the second v42.
	commit(before, 6, append(slices.Clone(produced[100:200]), produced[300]))
	before.Close()

	// A sink of another subtask wrote after checkpoint 5 too: not ours.
	other := newObjectSink(t, ts, ObjectSinkConfig{Bucket: "files", Prefix: "out", Writer: "job.out.1", Subtask: 1}, objAt)
	commit(other, 6, txRecords(1000, 3))

	first := newObjectSink(t, ts, cfg, objAt.Add(time.Minute))
	if n, err := first.SkipCommitted(ctx, 5); err != nil || n != 101 {
		t.Fatalf("SkipCommitted = %d, %v; want 101 lines", n, err)
	}
	replayed := slices.Clone(produced[100:])
	slices.Reverse(replayed)
	commit(first, 7, replayed[:120])
	if first.Replayed() != 20 || first.Unreplayed() != 81 {
		t.Fatalf("replayed %d, unreplayed %d; want 20 and 81", first.Replayed(), first.Unreplayed())
	}
	r, release, err := first.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	state, err := io.ReadAll(r)
	release()
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	_, left, err := DecodeSinkState(state)
	if err != nil || left == nil || left.Len() != 81 {
		t.Fatalf("checkpoint 7's state: replay %v, %v; want 81 lines", left, err)
	}
	second := newObjectSink(t, ts, cfg, objAt.Add(2*time.Minute))
	if n, err := second.KeepSkipping([]*Replay{left}); err != nil || n != 81 {
		t.Fatalf("KeepSkipping = %d, %v; want 81", n, err)
	}
	commit(second, 8, replayed[120:])
	if second.Unreplayed() != 0 {
		t.Fatalf("unreplayed %d, want 0", second.Unreplayed())
	}

	seen := map[string]int{}
	for _, name := range objectNames(t, obs) {
		if strings.Contains(name, "_index/") {
			continue
		}
		for line := range strings.Lines(objectText(t, obs, name)) {
			var rec struct{ Value string }
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("%s: %q: %v", name, line, err)
			}
			seen[rec.Value]++
		}
	}
	for i := range 300 {
		want := 1
		if i == 42 {
			want = 2
		}
		if v := fmt.Sprintf("v%d", i); seen[v] != want {
			t.Fatalf("value %q in the bucket %d times, want %d", v, seen[v], want)
		}
	}
	if len(seen) != 303 {
		t.Fatalf("bucket holds %d distinct values, want 303 (300 and the other subtask's 3)", len(seen))
	}

	small := newObjectSink(t, ts, ObjectSinkConfig{Bucket: "files", Prefix: "out", Writer: "job.out.0", Budget: 50 * replayEntryBytes}, objAt)
	if _, err := small.SkipCommitted(ctx, 5); !errors.Is(err, ErrReplayBudget) ||
		!strings.Contains(err.Error(), "more than 50 records in objects of checkpoints after 5 (budget 2400 bytes)") {
		t.Fatalf("SkipCommitted past the budget: %v", err)
	}
}
