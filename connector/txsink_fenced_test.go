package connector

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

// commitEpoch stages recs as epoch id, commits it and waits for the outcome.
func commitEpoch(t *testing.T, s *TxSink, id int64, recs []abi.Record) error {
	t.Helper()
	return commitRecords(testCtx(t), s, id, recs)
}

func commitRecords(ctx context.Context, s *TxSink, id int64, recs []abi.Record) error {
	if err := s.Write(ctx, recs); err != nil {
		return err
	}
	if err := s.Seal(id); err != nil {
		return err
	}
	if err := s.Commit(ctx, id); err != nil {
		return err
	}
	return s.Flush(ctx)
}

// sealedEpoch is epoch id of recs as a checkpoint holds it.
func sealedEpoch(t *testing.T, ts *testServer, prefix string, id int64, recs []abi.Record) []*Epoch {
	t.Helper()
	s := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: prefix})
	if err := s.Write(testCtx(t), recs); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal(id); err != nil {
		t.Fatal(err)
	}
	return snapshotEpochs(t, s)
}

// checkSinkExactlyOnce: the sink subject tx.out of stream TX holds the
// values v0 ... v<n-1>, each once.
func checkSinkExactlyOnce(t *testing.T, js jetstream.JetStream, n int) {
	t.Helper()
	seen := map[string]int{}
	for _, v := range subjectMessages(t, js, "TX", "tx.out") {
		seen[v]++
	}
	if len(seen) != n {
		t.Fatalf("sink subject holds %d distinct messages, want %d", len(seen), n)
	}
	for i := range n {
		if c := seen["v"+strconv.Itoa(i)]; c != 1 {
			t.Fatalf("message v%d stored %d times", i, c)
		}
	}
}

// TestFencedTxSinkCommitsExactly: epochs of sizes around the batch size are
// committed whole, in batches of the indexes [1000k, 1000k+1000), the first
// message of each expecting the fence, with the ids of the unfenced sink.
func TestFencedTxSinkCommitsExactly(t *testing.T) {
	sizes := []int{1, 999, 1000, 1001, 2500}
	tests := []struct {
		name   string
		budget int64
	}{
		{"in memory", 0},
		{"spilled", 1 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t)
			newTxStream(t, ts, time.Minute)
			f := takeTestFence(t, ts.js, "job.out.0")
			s := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Fence: f, Budget: tt.budget, SpillDir: t.TempDir()})
			from := 0
			for i, n := range sizes {
				if err := commitEpoch(t, s, int64(i+1), txRecords(from, n)); err != nil {
					t.Fatal(err)
				}
				from += n
			}
			if got, want := s.Batches(), (BatchStats{Stored: 1 + 1 + 1 + 2 + 3}); got != want || s.Committed() != 5 {
				t.Fatalf("batches %+v (want %+v), %d epochs committed", got, want, s.Committed())
			}
			checkSinkExactlyOnce(t, ts.js, from)
			// Epoch 5 starts at sequence 1+1+999+1000+1001+1: its batch 1
			// at index 1000.
			st, err := ts.js.Stream(testCtx(t), "TX")
			if err != nil {
				t.Fatal(err)
			}
			first, err := st.GetMsg(testCtx(t), 3003+1000)
			if err != nil {
				t.Fatal(err)
			}
			h := first.Header
			if h.Get(nats.MsgIdHdr) != "job.out.0.5.1000" || h.Get(hdrBatchSeq) != "1" ||
				h.Get(jetstream.ExpectedLastSubjSeqHeader) != "1" || h.Get(jetstream.ExpectedLastSubjSeqSubjHeader) != f.Subject {
				t.Fatalf("first message of a batch has headers %v", h)
			}
			if last, err := st.GetMsg(testCtx(t), 3003+999); err != nil || last.Header.Get(hdrBatchCommit) != "1" ||
				last.Header.Get(nats.MsgIdHdr) != "job.out.0.5.999" || last.Header.Get(jetstream.ExpectedLastSubjSeqHeader) != "" {
				t.Fatalf("last message of a batch: %v, %v", last, err)
			}
		})
	}
}

// TestFencedTxSinkZombieIsRejected: once a new owner took the fence, the
// old owner's next commit fails with ErrFenced and stores nothing, while
// the new owner's sink commits.
func TestFencedTxSinkZombieIsRejected(t *testing.T) {
	ts := startServer(t)
	newTxStream(t, ts, time.Minute)
	old := takeTestFence(t, ts.js, "job.out.0")
	zombie := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Fence: old})
	if err := commitEpoch(t, zombie, 1, txRecords(0, 1500)); err != nil {
		t.Fatal(err)
	}
	taken := takeTestFence(t, ts.js, "job.out.0")
	err := commitEpoch(t, zombie, 2, txRecords(1500, 2500))
	if !errors.Is(err, ErrFenced) || !strings.Contains(err.Error(), `publish to "tx.out"`) || !strings.Contains(err.Error(), old.String()) {
		t.Fatalf("zombie's commit: %v", err)
	}
	if err := zombie.Write(testCtx(t), txRecords(4000, 10)); !errors.Is(err, ErrFenced) {
		t.Fatalf("a fenced sink staged more: %v", err)
	}
	if got, want := zombie.Batches(), (BatchStats{Stored: 2}); got != want {
		t.Fatalf("zombie's batches %+v, want %+v", got, want)
	}
	checkSinkExactlyOnce(t, ts.js, 1500)
	owner := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Fence: taken})
	if err := commitEpoch(t, owner, 2, txRecords(1500, 2500)); err != nil {
		t.Fatal(err)
	}
	if got, want := owner.Batches(), (BatchStats{Stored: 3}); got != want {
		t.Fatalf("owner's batches %+v, want %+v", got, want)
	}
	checkSinkExactlyOnce(t, ts.js, 4000)
}

// TestFencedTxSinkRecommits: an epoch recovered under a new fence stores
// what the earlier owner did not: batches it stored whole are refused as
// duplicates (within the duplicate window) or found by reading back (beyond
// it) and skipped, the rest are stored.
func TestFencedTxSinkRecommits(t *testing.T) {
	tests := []struct {
		name string
		// window is the stream's duplicate window, stored the records the
		// earlier owner committed (whole batches, or one by one when
		// unfenced).
		window   time.Duration
		stored   int
		unfenced bool
		st       RecoverStats
		want     BatchStats
	}{
		{"committed", time.Minute, 2500, false, RecoverStats{Epochs: 1, Published: 2500}, BatchStats{Skipped: 3}},
		{"two batches of three", time.Minute, 2000, false, RecoverStats{Epochs: 1, Published: 2500}, BatchStats{Stored: 1, Skipped: 2}},
		{"nothing", time.Minute, 0, false, RecoverStats{Epochs: 1, Published: 2500}, BatchStats{Stored: 3}},
		{"two batches beyond the window", time.Second, 2000, false, RecoverStats{Epochs: 1, Published: 500, Skipped: 2000, ReadBack: true}, BatchStats{Stored: 1, Skipped: 2}},
		// Read back, the second batch sends only its last 500 records.
		{"one and a half batches unfenced, beyond the window", time.Second, 1500, true, RecoverStats{Epochs: 1, Published: 1000, Skipped: 1500, ReadBack: true}, BatchStats{Stored: 2, Skipped: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t)
			newTxStream(t, ts, tt.window)
			epochs := sealedEpoch(t, ts, "job.out.0", 7, txRecords(0, 2500))
			restored := time.Now()
			if tt.stored > 0 {
				// The earlier owner's commit stopped part way: the
				// same first records of the same epoch.
				cfg := TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0"}
				if !tt.unfenced {
					cfg.Fence = takeTestFence(t, ts.js, "job.out.0")
				}
				earlier := newTxSink(t, ts, cfg)
				if err := commitEpoch(t, earlier, 7, txRecords(0, tt.stored)); err != nil {
					t.Fatal(err)
				}
			}
			s := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Fence: takeTestFence(t, ts.js, "job.out.0")})
			st, err := s.Recover(testCtx(t), epochs, restored)
			if err != nil {
				t.Fatal(err)
			}
			if st != tt.st || s.Batches() != tt.want {
				t.Fatalf("recover: %+v (want %+v), batches %+v (want %+v)", st, tt.st, s.Batches(), tt.want)
			}
			checkSinkExactlyOnce(t, ts.js, 2500)
		})
	}
}

// TestFencedTxSinkCommitFailures: a batch JetStream refuses for good fails
// the sink with the server's reason for the message it refused, naming the
// subject: the batch, cut short, is refused as incomplete and sent again,
// asking for a reply to each message.
func TestFencedTxSinkCommitFailures(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t)
	if _, err := ts.js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "TX", Subjects: []string{"tx.>"}, MaxMsgSize: 512, Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
	s := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Fence: takeTestFence(t, ts.js, "job.out.0")})
	s.backoff = time.Millisecond
	recs := txRecords(0, 10)
	recs[4].Value = make([]byte, 1024)
	err := commitEpoch(t, s, 1, recs)
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != jetstream.JSErrCodeStreamMessageExceedsMaximum || !strings.Contains(err.Error(), `publish to "tx.out"`) {
		t.Fatalf("Flush = %v", err)
	}
	if got := s.Batches(); got != (BatchStats{Retried: 1}) || s.Committed() != 0 || s.Pending() != 1 {
		t.Fatalf("batches %+v, committed %d, pending %d after a failed commit", got, s.Committed(), s.Pending())
	}
	checkSinkExactlyOnce(t, ts.js, 0)
}
