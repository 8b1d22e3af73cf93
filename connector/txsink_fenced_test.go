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
	if err := startCommit(ctx, s, id, recs); err != nil {
		return err
	}
	return s.Flush(ctx)
}

// startCommit stages recs as epoch id and starts its commit, without
// waiting for the outcome.
func startCommit(ctx context.Context, s *TxSink, id int64, recs []abi.Record) error {
	if err := s.Write(ctx, recs); err != nil {
		return err
	}
	if err := s.Seal(id); err != nil {
		return err
	}
	return s.Commit(ctx, id)
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

// fenceModes are the two ways a fenced sink commits on one server: message
// by message (its own choice for a stream of one replica) and in atomic
// batches (what it does on a replicated stream).
var fenceModes = []struct {
	name      string
	inBatches bool
}{
	{"message by message", false},
	{"in batches", true},
}

// TestFencedTxSinkCommitsExactly: epochs of sizes around the batch size are
// committed whole, with the ids of the unfenced sink: message by message,
// each expecting the fence and carrying its id as Platform-Id, or in
// batches (with Nats-Msg-Id) of the indexes [1000k,
// 1000k+1000), the first message of each expecting the fence.
func TestFencedTxSinkCommitsExactly(t *testing.T) {
	sizes := []int{1, 999, 1000, 1001, 2500}
	tests := []struct {
		name   string
		budget int64
	}{
		{"in memory", 0},
		{"spilled", 1 << 10},
	}
	for _, mode := range fenceModes {
		for _, tt := range tests {
			t.Run(mode.name+"/"+tt.name, func(t *testing.T) {
				ts := startServer(t)
				newTxStream(t, ts, time.Minute)
				f := takeTestFence(t, ts.js, "job.out.0")
				s := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Fence: f, Budget: tt.budget, SpillDir: t.TempDir(), inBatches: mode.inBatches})
				from := 0
				for i, n := range sizes {
					if err := commitEpoch(t, s, int64(i+1), txRecords(from, n)); err != nil {
						t.Fatal(err)
					}
					from += n
				}
				var want BatchStats
				if mode.inBatches {
					want.Stored = 1 + 1 + 1 + 2 + 3
				}
				if got := s.Batches(); got != want || s.Committed() != 5 {
					t.Fatalf("batches %+v (want %+v), %d epochs committed", got, want, s.Committed())
				}
				checkSinkExactlyOnce(t, ts.js, from)
				// Epoch 5 starts at sequence 1+1+999+1000+1001+1: its
				// batch 1 at index 1000.
				st := jsStream(t, ts.js, "TX")
				first, err := st.GetMsg(testCtx(t), 3003+1000)
				if err != nil {
					t.Fatal(err)
				}
				last, err := st.GetMsg(testCtx(t), 3003+999)
				if err != nil {
					t.Fatal(err)
				}
				// Message by message the id is in Platform-Id, and no
				// message carries a Nats-Msg-Id for JetStream to keep.
				idHdr, noHdr := HeaderID, nats.MsgIdHdr
				if mode.inBatches {
					idHdr, noHdr = nats.MsgIdHdr, HeaderID
				}
				if h := first.Header; h.Get(idHdr) != "job.out.0.5.1000" || h.Get(noHdr) != "" ||
					h.Get(jetstream.ExpectedLastSubjSeqHeader) != "1" || h.Get(jetstream.ExpectedLastSubjSeqSubjHeader) != f.Subject {
					t.Fatalf("first message of a batch has headers %v", h)
				}
				h := last.Header
				if h.Get(idHdr) != "job.out.0.5.999" || h.Get(noHdr) != "" {
					t.Fatalf("last message of a batch has headers %v", h)
				}
				if !mode.inBatches {
					if h.Get(jetstream.ExpectedLastSubjSeqHeader) != "1" || h.Get(jetstream.ExpectedLastSubjSeqSubjHeader) != f.Subject ||
						h.Get(hdrBatchID) != "" || first.Header.Get(hdrBatchSeq) != "" {
						t.Fatalf("a message committed on its own has headers %v", h)
					}
					return
				}
				if first.Header.Get(hdrBatchSeq) != "1" || h.Get(hdrBatchCommit) != "1" || h.Get(jetstream.ExpectedLastSubjSeqHeader) != "" {
					t.Fatalf("batch headers: first %v, last %v", first.Header, h)
				}
			})
		}
	}
}

// TestFencedTxSinkZombieIsRejected: once a new owner took the fence, the
// old owner's next commit fails with ErrFenced and stores nothing, while
// the new owner's sink commits.
func TestFencedTxSinkZombieIsRejected(t *testing.T) {
	for _, mode := range fenceModes {
		t.Run(mode.name, func(t *testing.T) {
			ts := startServer(t)
			newTxStream(t, ts, time.Minute)
			old := takeTestFence(t, ts.js, "job.out.0")
			zombie := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Fence: old, inBatches: mode.inBatches})
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
			batches := func(n int64) BatchStats {
				if mode.inBatches {
					return BatchStats{Stored: n}
				}
				return BatchStats{}
			}
			if got, want := zombie.Batches(), batches(2); got != want {
				t.Fatalf("zombie's batches %+v, want %+v", got, want)
			}
			checkSinkExactlyOnce(t, ts.js, 1500)
			owner := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Fence: taken, inBatches: mode.inBatches})
			if err := commitEpoch(t, owner, 2, txRecords(1500, 2500)); err != nil {
				t.Fatal(err)
			}
			if got, want := owner.Batches(), batches(3); got != want {
				t.Fatalf("owner's batches %+v, want %+v", got, want)
			}
			checkSinkExactlyOnce(t, ts.js, 4000)
		})
	}
}

// TestFencedTxSinkRecommits: an epoch recovered under a new fence stores
// what the earlier owner did not, whichever way either commits. The new
// owner advances its fence and reads back which records are stored (by
// their Nats-Msg-Id, or by Platform-Id for a fenced commit message by
// message), within the duplicate window or beyond it, and sends only the
// others: message by message, or in batches, skipping a batch stored whole
// and sending the rest of the others.
func TestFencedTxSinkRecommits(t *testing.T) {
	// How the earlier owner committed the first records of the epoch.
	const (
		none = iota
		unfenced
		byMessage
		inBatches
	)
	read := func(stored int64) RecoverStats {
		return RecoverStats{Epochs: 1, Published: 2500 - stored, Skipped: stored, ReadBack: true}
	}
	tests := []struct {
		name string
		// window is the stream's duplicate window; the earlier owner
		// committed the first stored records; batches: the new owner
		// commits in batches.
		window  time.Duration
		stored  int
		earlier int
		batches bool
		st      RecoverStats
		want    BatchStats
	}{
		{"committed", time.Minute, 2500, inBatches, true, read(2500), BatchStats{Skipped: 3}},
		{"two batches of three", time.Minute, 2000, inBatches, true, read(2000), BatchStats{Stored: 1, Skipped: 2}},
		{"nothing", time.Minute, 0, none, true, read(0), BatchStats{Stored: 3}},
		{"two batches beyond the window", time.Second, 2000, inBatches, true, read(2000), BatchStats{Stored: 1, Skipped: 2}},
		// The second batch sends only its last 500 records.
		{"one and a half batches unfenced, beyond the window", time.Second, 1500, unfenced, true, read(1500), BatchStats{Stored: 2, Skipped: 1}},
		{"one and a half batches unfenced", time.Minute, 1500, unfenced, true, read(1500), BatchStats{Stored: 2, Skipped: 1}},
		{"one and a half batches message by message", time.Minute, 1500, byMessage, true, read(1500), BatchStats{Stored: 2, Skipped: 1}},
		{"message by message, committed", time.Minute, 2500, byMessage, false, read(2500), BatchStats{}},
		{"message by message, two batches of three", time.Minute, 2000, inBatches, false, read(2000), BatchStats{}},
		{"message by message, 1500 records", time.Minute, 1500, byMessage, false, read(1500), BatchStats{}},
		{"message by message, 1500 records unfenced", time.Minute, 1500, unfenced, false, read(1500), BatchStats{}},
		{"message by message, nothing", time.Minute, 0, none, false, read(0), BatchStats{}},
		{"message by message, beyond the window", time.Second, 1500, byMessage, false, read(1500), BatchStats{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t)
			newTxStream(t, ts, tt.window)
			epochs := sealedEpoch(t, ts, "job.out.0", 7, txRecords(0, 2500))
			restored := time.Now()
			if tt.earlier != none {
				// The earlier owner's commit stopped part way: the
				// same first records of the same epoch.
				cfg := TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", inBatches: tt.earlier == inBatches}
				if tt.earlier != unfenced {
					cfg.Fence = takeTestFence(t, ts.js, "job.out.0")
				}
				earlier := newTxSink(t, ts, cfg)
				if err := commitEpoch(t, earlier, 7, txRecords(0, tt.stored)); err != nil {
					t.Fatal(err)
				}
			}
			s := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Fence: takeTestFence(t, ts.js, "job.out.0"), inBatches: tt.batches})
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

// TestFencedTxSinkCommitFailures: a message JetStream refuses for good
// fails the sink with the server's reason, naming the subject. Committed
// message by message, the others are stored; in a batch, the batch, cut
// short, is refused as incomplete and sent again, asking for a reply to
// each message, and nothing of it is stored.
func TestFencedTxSinkCommitFailures(t *testing.T) {
	for _, mode := range fenceModes {
		t.Run(mode.name, func(t *testing.T) {
			ts := startServer(t)
			ctx := testCtx(t)
			if _, err := ts.js.CreateStream(ctx, jetstream.StreamConfig{
				Name: "TX", Subjects: []string{"tx.>"}, MaxMsgSize: 512, Storage: jetstream.FileStorage,
			}); err != nil {
				t.Fatal(err)
			}
			s := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Fence: takeTestFence(t, ts.js, "job.out.0"), inBatches: mode.inBatches})
			s.backoff = time.Millisecond
			recs := txRecords(0, 10)
			recs[4].Value = make([]byte, 1024)
			err := commitEpoch(t, s, 1, recs)
			var apiErr *jetstream.APIError
			if !errors.As(err, &apiErr) || apiErr.ErrorCode != jetstream.JSErrCodeStreamMessageExceedsMaximum || !strings.Contains(err.Error(), `publish to "tx.out"`) {
				t.Fatalf("Flush = %v", err)
			}
			var want BatchStats
			stored := 9
			if mode.inBatches {
				want, stored = BatchStats{Retried: 1}, 0
			}
			if got := s.Batches(); got != want || s.Committed() != 0 || s.Pending() != 1 {
				t.Fatalf("batches %+v, committed %d, pending %d after a failed commit", got, s.Committed(), s.Pending())
			}
			if got := len(subjectSeqs(t, ts.js, "TX", "tx.out")); got != stored {
				t.Fatalf("sink subject holds %d messages, want %d", got, stored)
			}
		})
	}
}
