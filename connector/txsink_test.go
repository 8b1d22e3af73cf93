package connector

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

func txRecords(from, n int) []abi.Record {
	recs := make([]abi.Record, n)
	for i := range recs {
		recs[i] = abi.Record{Key: []byte("k"), Value: fmt.Appendf(nil, "v%d", from+i), Timestamp: int64(from + i)}
	}
	return recs
}

func newTxStream(t *testing.T, ts *testServer, window time.Duration) {
	t.Helper()
	if _, err := ts.js.CreateStream(testCtx(t), jetstream.StreamConfig{
		Name: "TX", Subjects: []string{"tx.>"}, Duplicates: window, Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
}

func newTxSink(t *testing.T, ts *testServer, cfg TxSinkConfig) *TxSink {
	t.Helper()
	s, err := NewTxSink(testCtx(t), ts.js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// snapshotEpochs round-trips a sink's sealed epochs through their snapshot
// format, as a restore would see them.
func snapshotEpochs(t *testing.T, s *TxSink) []*Epoch {
	t.Helper()
	r, release, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(r)
	release()
	if err != nil {
		t.Fatal(err)
	}
	epochs, err := DecodeEpochs(data)
	if err != nil {
		t.Fatal(err)
	}
	return epochs
}

// storedValues counts each payload in the stream.
func storedValues(t *testing.T, ts *testServer) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for _, m := range readBack(t, ts, "TX") {
		seen[m]++
	}
	return seen
}

func checkExactlyOnce(t *testing.T, ts *testServer, n int) {
	t.Helper()
	got := storedValues(t, ts)
	if len(got) != n {
		t.Fatalf("stream holds %d distinct messages, want %d", len(got), n)
	}
	for m, c := range got {
		if c != 1 {
			t.Fatalf("message %s stored %d times", m, c)
		}
	}
}

// TestTxSinkCommitsSealedEpochsOnly stages records over three epochs, spills
// past a tiny budget, and commits only what completed checkpoints cover.
func TestTxSinkCommitsSealedEpochsOnly(t *testing.T) {
	ts := startServer(t)
	newTxStream(t, ts, time.Minute)
	ctx := testCtx(t)
	s := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Budget: 1 << 10, SpillDir: t.TempDir()})
	for epoch := int64(1); epoch <= 3; epoch++ {
		if err := s.Write(ctx, txRecords(int(epoch-1)*100, 100)); err != nil {
			t.Fatal(err)
		}
		if err := s.Seal(epoch); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Write(ctx, txRecords(300, 10)); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.poll(); err != nil || s.Pending() != 1 || s.Committed() != 2 {
		t.Fatalf("pending %d committed %d, %v", s.Pending(), s.Committed(), err)
	}
	checkExactlyOnce(t, ts, 200)
	msgs := readBack(t, ts, "TX")
	if want := "tx.out|v0|Nats-Msg-Id=job.out.0.1.0;Platform-Key=k;Platform-Timestamp=0"; msgs[0] != want {
		t.Fatalf("first message %s, want %s", msgs[0], want)
	}
}

// TestTxSinkRecoverDeduplicates: a commit that crashed half way is replayed
// from the checkpoint; within the duplicate window JetStream drops what it
// has.
func TestTxSinkRecoverDeduplicates(t *testing.T) {
	ts := startServer(t)
	newTxStream(t, ts, time.Minute)
	ctx := testCtx(t)
	s := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0"})
	if err := s.Write(ctx, txRecords(0, 500)); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal(7); err != nil {
		t.Fatal(err)
	}
	epochs := snapshotEpochs(t, s)
	restored := time.Now()
	// The crashed commit got the first 200 records out.
	half := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0"})
	if err := half.Write(ctx, txRecords(0, 200)); err != nil {
		t.Fatal(err)
	}
	if err := half.Seal(7); err != nil {
		t.Fatal(err)
	}
	if err := half.Commit(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if err := half.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	again := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0"})
	st, err := again.Recover(ctx, epochs, restored)
	if err != nil {
		t.Fatal(err)
	}
	if st.ReadBack || st.Published != 500 {
		t.Fatalf("recover: %+v", st)
	}
	checkExactlyOnce(t, ts, 500)
}

// TestTxSinkRecoverReadsBackBeyondTheWindow: when the crashed commit began
// longer ago than the duplicate window, recovery reads the stored ids back
// and publishes only the rest.
func TestTxSinkRecoverReadsBackBeyondTheWindow(t *testing.T) {
	ts := startServer(t)
	newTxStream(t, ts, time.Second)
	ctx := testCtx(t)
	s := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.1"})
	if err := s.Write(ctx, txRecords(0, 300)); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal(4); err != nil {
		t.Fatal(err)
	}
	epochs := snapshotEpochs(t, s)
	restored := time.Now()
	half := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.1"})
	if err := half.Write(ctx, txRecords(0, 120)); err != nil {
		t.Fatal(err)
	}
	if err := half.Seal(4); err != nil {
		t.Fatal(err)
	}
	if err := half.Commit(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if err := half.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Other output on the subject is not mistaken for this epoch's.
	other := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.2"})
	if err := other.Write(ctx, txRecords(1000, 5)); err != nil {
		t.Fatal(err)
	}
	if err := other.Seal(4); err != nil {
		t.Fatal(err)
	}
	if err := other.Commit(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if err := other.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// A one-second window is shorter than the margin: the epoch is read back
	// without waiting for the window to pass.
	again := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.1"})
	st, err := again.Recover(ctx, epochs, restored)
	if err != nil {
		t.Fatal(err)
	}
	if !st.ReadBack || st.Skipped != 120 || st.Published != 180 {
		t.Fatalf("recover: %+v", st)
	}
	checkExactlyOnce(t, ts, 305)
}

func TestTxSinkRejectsBadRecordsWhenStaged(t *testing.T) {
	ts := startServer(t)
	newTxStream(t, ts, time.Minute)
	s := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "p"})
	err := s.Write(context.Background(), []abi.Record{{Key: []byte("a\nb")}})
	if err == nil {
		t.Fatal("a key with a newline was staged")
	}
}
