package connector

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

// clusterTxStream starts a cluster of three and creates stream TX with
// replicas, capturing tx.>, and waits until every node finds it by its
// subject.
func clusterTxStream(t *testing.T, replicas int) *testCluster {
	t.Helper()
	c := startCluster(t, 3)
	c.createStream(t, jetstream.StreamConfig{
		Name: "TX", Subjects: []string{"tx.>"}, Replicas: replicas, Duplicates: time.Minute, Storage: jetstream.FileStorage,
	})
	ctx := testCtx(t)
	for _, js := range c.js {
		for {
			_, err := js.StreamNameBySubject(ctx, "tx.out")
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("stream TX not found by its subject: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return c
}

// openTxSink is newTxSink on any JetStream context.
func openTxSink(t *testing.T, js jetstream.JetStream, cfg TxSinkConfig) *TxSink {
	t.Helper()
	s, err := NewTxSink(testCtx(t), js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestFencedTxSinkOnCluster: on a stream of three replicas a fenced sink
// commits 20,000 records in 20 batches, one after the other, without one
// refusal; once a worker on another node took the fence over, the first
// one's next commit is refused whole and the new one's commits.
func TestFencedTxSinkOnCluster(t *testing.T) {
	c := clusterTxStream(t, 3)
	first := openTxSink(t, c.js[1], TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Fence: takeTestFence(t, c.js[1], "job.out.0")})
	for epoch := range 4 {
		if err := commitEpoch(t, first, int64(epoch+1), txRecords(epoch*5000, 5000)); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := first.Batches(), (BatchStats{Stored: 20}); got != want {
		t.Fatalf("batches %+v, want %+v", got, want)
	}
	checkSinkExactlyOnce(t, c.js[0], 20000)

	taken := takeTestFence(t, c.js[2], "job.out.0")
	if err := commitEpoch(t, first, 5, txRecords(20000, 3000)); !errors.Is(err, ErrFenced) {
		t.Fatalf("the zombie's commit: %v", err)
	}
	checkSinkExactlyOnce(t, c.js[0], 20000)
	owner := openTxSink(t, c.js[2], TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Fence: taken})
	if err := commitEpoch(t, owner, 5, txRecords(20000, 3000)); err != nil {
		t.Fatal(err)
	}
	if got, want := owner.Batches(), (BatchStats{Stored: 3}); got != want {
		t.Fatalf("new owner's batches %+v, want %+v", got, want)
	}
	checkSinkExactlyOnce(t, c.js[0], 23000)
}

// TestFencedTxSinkZombieRacesTheTakeover: a zombie committing epoch after
// epoch, with many messages (one server, or a stream of one replica on a
// cluster) or a batch (in batches) in flight, while another worker takes
// its fence, is refused from then on: no message of it follows the new
// fence in the stream, it stored whole epochs and then the first records
// of the next (message by message) or its first batches (in batches), and
// the new owner recovering that epoch completes it exactly.
func TestFencedTxSinkZombieRacesTheTakeover(t *testing.T) {
	tests := []struct {
		name string
		// start returns the zombie's JetStream context and the new owner's.
		start     func(t *testing.T) (zombie, owner jetstream.JetStream)
		inBatches bool
		// epochSize is the records of each epoch: message by message,
		// more than the zombie has in flight, so that the fence lands
		// within an epoch.
		epochSize int
	}{
		{"one server", oneTxServer, false, 10000},
		{"one server, in batches", oneTxServer, true, 4000},
		{"one replica on a cluster of three", func(t *testing.T) (jetstream.JetStream, jetstream.JetStream) {
			c := clusterTxStream(t, 1)
			return c.js[1], c.js[2]
		}, false, 10000},
		{"cluster of three", func(t *testing.T) (jetstream.JetStream, jetstream.JetStream) {
			c := clusterTxStream(t, 3)
			return c.js[1], c.js[2]
		}, true, 4000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			epochSize := tt.epochSize
			zjs, ojs := tt.start(t)
			restored := time.Now()
			fence := takeTestFence(t, zjs, "job.out.0")
			zombie := openTxSink(t, zjs, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Fence: fence, inBatches: tt.inBatches})
			if got := zombie.batches != nil; got != tt.inBatches {
				t.Fatalf("the sink commits in batches: %v, want %v", got, tt.inBatches)
			}
			ctx := testCtx(t)
			type stop struct {
				epoch int
				err   error
			}
			done := make(chan stop, 1)
			go func() {
				for epoch := 1; ; epoch++ {
					if err := commitRecords(ctx, zombie, int64(epoch), txRecords((epoch-1)*epochSize, epochSize)); err != nil {
						done <- stop{epoch, err}
						return
					}
				}
			}()
			// The takeover comes once the zombie stored three epochs and
			// began the fourth.
			st := jsStream(t, ojs, "TX")
			for {
				info, err := st.Info(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if info.State.LastSeq > fence.Seq+uint64(3*epochSize+epochSize/8) {
					break
				}
				select {
				case s := <-done:
					t.Fatalf("the zombie stopped before the takeover: %v", s.err)
				case <-time.After(time.Millisecond):
				}
			}
			attempts := 0
			taken, err := takeFence(testCtx(t), ojs, "tx.out", "job.out.0", func(int) { attempts++ })
			if err != nil {
				t.Fatal(err)
			}
			last := <-done
			if !errors.Is(last.err, ErrFenced) {
				t.Fatalf("the zombie stopped with %v", last.err)
			}
			info, err := st.Info(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			if info.State.LastSeq != taken.Seq {
				t.Fatalf("stream ends at sequence %d after the fence at %d", info.State.LastSeq, taken.Seq)
			}
			whole, part := storedEpochs(t, ojs, epochSize)
			if whole != last.epoch-1 {
				t.Fatalf("the zombie stored epochs 1 to %d whole, and failed committing epoch %d", whole, last.epoch)
			}
			if tt.inBatches && (part%batchMax != 0 || zombie.Batches().Stored != int64(whole*epochSize+part)/batchMax) {
				t.Fatalf("the zombie stored %d records of epoch %d and batches %+v", part, last.epoch, zombie.Batches())
			}
			t.Logf("zombie: %d epochs and %d records of epoch %d, batches %+v; fence at %d after %d attempts",
				whole, part, last.epoch, zombie.Batches(), taken.Seq, attempts)

			epochs := sealedEpochOn(t, ojs, "job.out.0", int64(last.epoch), txRecords(whole*epochSize, epochSize))
			owner := openTxSink(t, ojs, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Fence: taken, inBatches: tt.inBatches})
			if _, err := owner.Recover(testCtx(t), epochs, restored); err != nil {
				t.Fatal(err)
			}
			checkSinkExactlyOnce(t, ojs, last.epoch*epochSize)
		})
	}
}

// oneTxServer starts a server with stream TX and returns its JetStream
// context twice, for a zombie and its new owner.
func oneTxServer(t *testing.T) (jetstream.JetStream, jetstream.JetStream) {
	ts := startServer(t)
	newTxStream(t, ts, time.Minute)
	return ts.js, ts.js
}

// storedEpochs reads the values the sink subject tx.out holds, v<n> for
// record n%size of epoch n/size+1, and returns how many epochs from 1 on it
// holds whole and how many records of the next one, failing unless those
// are its first ones and every record is stored once.
func storedEpochs(t *testing.T, js jetstream.JetStream, size int) (whole, part int) {
	t.Helper()
	stored := map[int]map[int]bool{}
	for seq, v := range subjectMessages(t, js, "TX", "tx.out") {
		n, err := strconv.Atoi(strings.TrimPrefix(v, "v"))
		if err != nil {
			t.Fatalf("message %d holds %q", seq, v)
		}
		e, i := n/size+1, n%size
		if stored[e] == nil {
			stored[e] = map[int]bool{}
		}
		if stored[e][i] {
			t.Fatalf("record %d of epoch %d stored twice", i, e)
		}
		stored[e][i] = true
	}
	for len(stored[whole+1]) == size {
		whole++
	}
	next := stored[whole+1]
	for i := range len(next) {
		if !next[i] {
			t.Fatalf("epoch %d has %d records stored, not its first ones", whole+1, len(next))
		}
	}
	if len(stored) > whole+min(len(next), 1) {
		t.Fatalf("records of %d epochs stored, %d of them whole", len(stored), whole)
	}
	return whole, len(next)
}

// sealedEpochOn is epoch id of recs as a checkpoint holds it, staged by a
// sink on js.
func sealedEpochOn(t *testing.T, js jetstream.JetStream, prefix string, id int64, recs []abi.Record) []*Epoch {
	t.Helper()
	s := openTxSink(t, js, TxSinkConfig{Subject: "tx.out", Prefix: prefix})
	if err := s.Write(testCtx(t), recs); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal(id); err != nil {
		t.Fatal(err)
	}
	return snapshotEpochs(t, s)
}

func jsStream(t *testing.T, js jetstream.JetStream, name string) jetstream.Stream {
	t.Helper()
	st, err := js.Stream(testCtx(t), name)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
