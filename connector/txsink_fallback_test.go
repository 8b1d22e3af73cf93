package connector

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
)

// TestTxSinkSkipCommittedAfterFallback: a sink restored from checkpoint 5
// because checkpoint 6 is corrupt remembers what its epoch 6 committed
// (not epoch 5's), and drops exactly those records from the replay of the
// input since checkpoint 5, whatever their order, the order of their
// headers, and how often equal records occur: the subject then holds every
// record as often as the job produced it. Unfenced, and fenced committing
// message by message and in batches (ids in Platform-Id or Nats-Msg-Id).
func TestTxSinkSkipCommittedAfterFallback(t *testing.T) {
	modes := []struct {
		name      string
		fenced    bool
		inBatches bool
	}{{"unfenced", false, false}, {"fenced message by message", true, false}, {"fenced in batches", true, true}}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			ts := startServer(t)
			newTxStream(t, ts, time.Minute)
			cfg := func() TxSinkConfig {
				c := TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", inBatches: mode.inBatches}
				if mode.fenced {
					c.Fence = takeTestFence(t, ts.js, "job.out.0")
				}
				return c
			}
			// What the job produces from its input: v0 ... v299, then
			// v42 twice more and a record with two headers.
			produced := append(txRecords(0, 300), txRecords(42, 1)[0], txRecords(42, 1)[0], abi.Record{
				Key: []byte("h"), Value: []byte("with headers"), Timestamp: 7,
				Headers: []abi.Header{{Name: []byte("A"), Value: []byte("1")}, {Name: []byte("B"), Value: []byte("2")}},
			})
			before := newTxSink(t, ts, cfg())
			if err := commitEpoch(t, before, 5, produced[:100]); err != nil {
				t.Fatal(err)
			}
			restored := time.Now()
			// Epoch 6: v100 ... v249, one more v42 and the record with
			// headers; epoch 7 (v250 ... v299 and the last v42) was staged
			// only.
			epoch6 := append(slices.Clone(produced[100:250]), produced[300], produced[302])
			if err := commitEpoch(t, before, 6, epoch6); err != nil {
				t.Fatal(err)
			}
			if err := before.Write(testCtx(t), append(slices.Clone(produced[250:300]), produced[301])); err != nil {
				t.Fatal(err)
			}
			before.Close()

			s := newTxSink(t, ts, cfg())
			found, err := s.SkipCommitted(testCtx(t), 5, restored)
			if err != nil || found != 152 {
				t.Fatalf("SkipCommitted = %d, %v; want 152 committed records", found, err)
			}
			// The replay from checkpoint 5, in another order, the
			// headers swapped.
			replayed := slices.Clone(produced[100:])
			slices.Reverse(replayed)
			swapped := replayed[0]
			swapped.Headers = []abi.Header{swapped.Headers[1], swapped.Headers[0]}
			replayed[0] = swapped
			for i := 0; i < len(replayed); i += 64 {
				if err := s.Write(testCtx(t), replayed[i:min(i+64, len(replayed))]); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Seal(8); err != nil {
				t.Fatal(err)
			}
			if err := s.Commit(testCtx(t), 8); err != nil {
				t.Fatal(err)
			}
			if err := s.Flush(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			if s.Replayed() != 152 || s.Unreplayed() != 0 {
				t.Fatalf("replayed %d, unreplayed %d; want 152 and 0", s.Replayed(), s.Unreplayed())
			}
			seen := map[string]int{}
			for _, v := range subjectMessages(t, ts.js, "TX", "tx.out") {
				seen[v]++
			}
			want := map[string]int{"with headers": 1}
			for i := range 300 {
				want[string(produced[i].Value)] = 1
			}
			want["v42"] = 3
			if len(seen) != len(want) {
				t.Fatalf("sink subject holds %d distinct values, want %d", len(seen), len(want))
			}
			for v, n := range want {
				if seen[v] != n {
					t.Fatalf("value %q stored %d times, want %d", v, seen[v], n)
				}
			}
		})
	}
}

// TestTxSinkSkipCommittedBudget: committed output beyond what the staging
// budget can remember fails the fallback, naming the limit, rather than
// publish duplicates.
func TestTxSinkSkipCommittedBudget(t *testing.T) {
	ts := startServer(t)
	newTxStream(t, ts, time.Minute)
	restored := time.Now()
	before := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0"})
	if err := commitEpoch(t, before, 6, txRecords(0, 11)); err != nil {
		t.Fatal(err)
	}
	s := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Budget: 10 * replayEntryBytes})
	_, err := s.SkipCommitted(testCtx(t), 5, restored)
	if !errors.Is(err, ErrReplayBudget) || !strings.Contains(err.Error(), "more than 10 records of epochs after checkpoint 5 (budget 480 bytes)") {
		t.Fatalf("SkipCommitted: %v", err)
	}
}

// TestTxSinkSkipCommittedSurvivesSecondFailure: a sink that falls back past
// checkpoint 6 fails again after checkpoint 7 completed, with 120 of the
// 200 records epoch 6 committed not yet replayed. Checkpoint 7's state of
// the sink holds them, and the sink restored from it drops them from the
// replay since checkpoint 7: the subject holds every record once.
func TestTxSinkSkipCommittedSurvivesSecondFailure(t *testing.T) {
	ts := startServer(t)
	newTxStream(t, ts, time.Minute)
	cfg := TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0"}
	before := newTxSink(t, ts, cfg)
	if err := commitEpoch(t, before, 5, txRecords(0, 100)); err != nil {
		t.Fatal(err)
	}
	restored := time.Now()
	if err := commitEpoch(t, before, 6, txRecords(100, 200)); err != nil {
		t.Fatal(err)
	}
	before.Close()

	first := newTxSink(t, ts, cfg)
	if found, err := first.SkipCommitted(testCtx(t), 5, restored); err != nil || found != 200 {
		t.Fatalf("SkipCommitted = %d, %v; want 200", found, err)
	}
	if err := first.Write(testCtx(t), txRecords(100, 80)); err != nil {
		t.Fatal(err)
	}
	if err := first.Seal(7); err != nil {
		t.Fatal(err)
	}
	state := snapshotBytes(t, first)
	if err := first.Commit(testCtx(t), 7); err != nil {
		t.Fatal(err)
	}
	// The replay goes on past checkpoint 7, then the job fails.
	if err := first.Write(testCtx(t), txRecords(180, 40)); err != nil {
		t.Fatal(err)
	}
	first.Close()

	epochs, left, err := DecodeSinkState(state)
	if err != nil || len(epochs) != 0 || left == nil || left.Len() != 120 {
		t.Fatalf("checkpoint 7's sink state: %d epochs, replay %v, %v; want none and 120 records", len(epochs), left, err)
	}
	second := newTxSink(t, ts, cfg)
	if n, err := second.KeepSkipping([]*Replay{nil, left}); err != nil || n != 120 {
		t.Fatalf("KeepSkipping = %d, %v; want 120", n, err)
	}
	// The replay since checkpoint 7: v180 ... v299, then new input.
	if err := commitEpoch(t, second, 8, txRecords(180, 170)); err != nil {
		t.Fatal(err)
	}
	if second.Replayed() != 120 || second.Unreplayed() != 0 {
		t.Fatalf("replayed %d, unreplayed %d; want 120 and 0", second.Replayed(), second.Unreplayed())
	}
	seen := map[string]int{}
	for _, v := range subjectMessages(t, ts.js, "TX", "tx.out") {
		seen[v]++
	}
	if len(seen) != 350 {
		t.Fatalf("sink subject holds %d distinct values, want 350", len(seen))
	}
	for i := range 350 {
		if v := fmt.Sprintf("v%d", i); seen[v] != 1 {
			t.Fatalf("value %q stored %d times, want once", v, seen[v])
		}
	}

	small := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.1", Budget: 100 * replayEntryBytes})
	if _, err := small.KeepSkipping([]*Replay{left}); !errors.Is(err, ErrReplayBudget) ||
		!strings.Contains(err.Error(), "more than 100 records still to drop from the replay (budget 4800 bytes)") {
		t.Fatalf("KeepSkipping past the budget: %v", err)
	}
}

// snapshotBytes is the sink's checkpointed state.
func snapshotBytes(t *testing.T, s *TxSink) []byte {
	t.Helper()
	r, release, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestTxSinkSkipCommittedNothingSince: a restore whose checkpoint was
// triggered after the sink's last message (the newest checkpoint, restored
// while older ones are corrupt) finds nothing to drop, at once: the read
// back does not wait for a message that will never come.
func TestTxSinkSkipCommittedNothingSince(t *testing.T) {
	ts := startServer(t)
	newTxStream(t, ts, time.Minute)
	before := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0"})
	if err := commitEpoch(t, before, 6, txRecords(0, 10)); err != nil {
		t.Fatal(err)
	}
	s := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0"})
	if found, err := s.SkipCommitted(testCtx(t), 7, time.Now().Add(time.Hour)); err != nil || found != 0 || s.Unreplayed() != 0 {
		t.Fatalf("SkipCommitted = %d, %v (unreplayed %d); want nothing", found, err, s.Unreplayed())
	}
}
