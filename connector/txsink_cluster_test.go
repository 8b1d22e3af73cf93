package connector

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// clusterTxStream starts a cluster of three and creates stream TX, three
// replicas, capturing tx.>.
func clusterTxStream(t *testing.T) *testCluster {
	t.Helper()
	c := startCluster(t, 3)
	c.createStream(t, jetstream.StreamConfig{
		Name: "TX", Subjects: []string{"tx.>"}, Replicas: 3, Duplicates: time.Minute, Storage: jetstream.FileStorage,
	})
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
	c := clusterTxStream(t)
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

// TestFencedTxSinkZombieRacesTheTakeover: a zombie committing batch after
// batch while another worker takes its fence is refused from then on: no
// message of it follows the new fence in the stream.
func TestFencedTxSinkZombieRacesTheTakeover(t *testing.T) {
	tests := []struct {
		name string
		// start returns the zombie's JetStream context and the new owner's.
		start func(t *testing.T) (zombie, owner jetstream.JetStream)
	}{
		{"one server", func(t *testing.T) (jetstream.JetStream, jetstream.JetStream) {
			ts := startServer(t)
			newTxStream(t, ts, time.Minute)
			return ts.js, ts.js
		}},
		{"cluster of three", func(t *testing.T) (jetstream.JetStream, jetstream.JetStream) {
			c := clusterTxStream(t)
			return c.js[1], c.js[2]
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			zjs, ojs := tt.start(t)
			zombie := openTxSink(t, zjs, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Fence: takeTestFence(t, zjs, "job.out.0")})
			ctx := testCtx(t)
			done := make(chan error, 1)
			go func() {
				for epoch := 1; ; epoch++ {
					if err := commitRecords(ctx, zombie, int64(epoch), txRecords(epoch*1000, 1000)); err != nil {
						done <- err
						return
					}
				}
			}()
			for zombie.Batches().Stored < 3 {
				select {
				case err := <-done:
					t.Fatalf("the zombie stopped before the takeover: %v", err)
				case <-time.After(time.Millisecond):
				}
			}
			attempts := 0
			taken, err := takeFence(testCtx(t), ojs, "tx.out", "job.out.0", func(int) { attempts++ })
			if err != nil {
				t.Fatal(err)
			}
			if err := <-done; !errors.Is(err, ErrFenced) {
				t.Fatalf("the zombie stopped with %v", err)
			}
			info, err := jsStream(t, ojs, "TX").Info(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			if info.State.LastSeq != taken.Seq {
				t.Fatalf("stream ends at sequence %d after the fence at %d", info.State.LastSeq, taken.Seq)
			}
			t.Logf("zombie: %+v; fence at %d after %d attempts", zombie.Batches(), taken.Seq, attempts)
			stored := zombie.Batches().Stored
			if got := len(subjectSeqs(t, ojs, "TX", "tx.out")); got != int(stored)*1000 {
				t.Fatalf("sink subject holds %d messages, the zombie stored %d batches", got, stored)
			}
		})
	}
}

func jsStream(t *testing.T, js jetstream.JetStream, name string) jetstream.Stream {
	t.Helper()
	st, err := js.Stream(testCtx(t), name)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
