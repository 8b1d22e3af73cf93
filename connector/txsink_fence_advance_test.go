package connector

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestFencedTxSinkRecoverUnderTheSameFence: a sink restarted under the same
// fence (a task restarted where its job's lease is still held) advances the
// fence before it reads back, so that a message of the earlier commit
// arriving after the read-back is refused, not stored beside the recommit.
// The earlier sink's messages still expect the old fence sequence.
func TestFencedTxSinkRecoverUnderTheSameFence(t *testing.T) {
	for _, mode := range fenceModes {
		t.Run(mode.name, func(t *testing.T) {
			ts := startServer(t)
			newTxStream(t, ts, time.Minute)
			f := takeTestFence(t, ts.js, "job.out.0")
			taken := f.Seq
			cfg := TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Fence: f, inBatches: mode.inBatches}
			epochs := sealedEpoch(t, ts, "job.out.0", 7, txRecords(0, 2500))
			restored := time.Now()
			earlier := newTxSink(t, ts, cfg)
			if err := commitEpoch(t, earlier, 7, txRecords(0, 1500)); err != nil {
				t.Fatal(err)
			}
			s := newTxSink(t, ts, cfg)
			st, err := s.Recover(testCtx(t), epochs, restored)
			if err != nil {
				t.Fatal(err)
			}
			if want := (RecoverStats{Epochs: 1, Published: 1000, Skipped: 1500, ReadBack: true}); st != want {
				t.Fatalf("recover: %+v, want %+v", st, want)
			}
			if f.Seq == taken {
				t.Fatalf("fence still at %d after the recovery", taken)
			}
			if got := subjectSeqs(t, ts.js, "TX", f.Subject); len(got) != 2 || got[0] != taken || got[1] != f.Seq {
				t.Fatalf("fence subject holds %v, want [%d %d]", got, taken, f.Seq)
			}
			// The earlier commit's late messages: the rest of the epoch
			// again, expecting the fence as it was.
			err = commitEpoch(t, earlier, 8, txRecords(1500, 1000))
			if !errors.Is(err, ErrFenced) {
				t.Fatalf("a late commit under the old fence sequence: %v", err)
			}
			checkSinkExactlyOnce(t, ts.js, 2500)
			// The recovered sink goes on under the advanced fence.
			if err := commitEpoch(t, s, 8, txRecords(2500, 10)); err != nil {
				t.Fatal(err)
			}
			checkSinkExactlyOnce(t, ts.js, 2510)
		})
	}
}

// TestFencedTxSinkZombieRecoverIsRejected: a sink whose fence another owner
// took cannot recover: advancing its fence fails with ErrFenced, naming
// the sink's subject, and nothing of its epochs is stored.
func TestFencedTxSinkZombieRecoverIsRejected(t *testing.T) {
	for _, mode := range fenceModes {
		t.Run(mode.name, func(t *testing.T) {
			ts := startServer(t)
			newTxStream(t, ts, time.Minute)
			old := takeTestFence(t, ts.js, "job.out.0")
			epochs := sealedEpoch(t, ts, "job.out.0", 7, txRecords(0, 1200))
			restored := time.Now()
			taken := takeTestFence(t, ts.js, "job.out.0")
			zombie := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Fence: old, inBatches: mode.inBatches})
			_, err := zombie.Recover(testCtx(t), epochs, restored)
			if !errors.Is(err, ErrFenced) || !strings.Contains(err.Error(), `sink to "tx.out"`) {
				t.Fatalf("zombie's recover: %v", err)
			}
			if got := subjectSeqs(t, ts.js, "TX", "tx.out"); len(got) != 0 {
				t.Fatalf("sink subject holds %d messages after a zombie's recover", len(got))
			}
			if got := subjectSeqs(t, ts.js, "TX", old.Subject); len(got) != 2 || got[1] != taken.Seq {
				t.Fatalf("fence subject holds %v, want the two fences taken", got)
			}
		})
	}
}

// TestAdvanceFenceFindsItsOwnMark: an advance whose acknowledgement was
// lost is found by its mark when tried again, and the fence moves to it; a
// fence advanced by another mark since is another owner's, ErrFenced.
func TestAdvanceFenceFindsItsOwnMark(t *testing.T) {
	ts := startServer(t)
	newTxStream(t, ts, time.Minute)
	ctx := testCtx(t)
	f := takeTestFence(t, ts.js, "job.out.0")
	lost, retried := *f, *f
	if err := advanceFenceAs(ctx, ts.js, "TX", &lost, "mark-1"); err != nil {
		t.Fatal(err)
	}
	if err := advanceFenceAs(ctx, ts.js, "TX", &retried, "mark-1"); err != nil || retried.Seq != lost.Seq {
		t.Fatalf("advance tried again: %v, at %d, want %d", err, retried.Seq, lost.Seq)
	}
	other := *f
	if err := advanceFenceAs(ctx, ts.js, "TX", &other, "mark-2"); !errors.Is(err, ErrFenced) || other.Seq != f.Seq {
		t.Fatalf("advance from a fence taken since: %v, at %d", err, other.Seq)
	}
	if got := subjectSeqs(t, ts.js, "TX", f.Subject); len(got) != 2 {
		t.Fatalf("fence subject holds %v, want the fence and one advance", got)
	}
}
