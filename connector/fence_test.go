package connector

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// takeFence takes the fence of key for the sink to tx.out.
func takeTestFence(t *testing.T, js jetstream.JetStream, key string) *Fence {
	t.Helper()
	f, err := TakeFence(testCtx(t), js, "tx.out", key)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// subjectMessages are the payloads of the messages on subject in stream by
// their sequence, read with an ordered consumer (one handed over twice
// counts once).
func subjectMessages(t *testing.T, js jetstream.JetStream, stream, subject string) map[uint64]string {
	t.Helper()
	ctx := testCtx(t)
	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	msgs := map[uint64]string{}
	last, err := lastSeq(ctx, st, subject)
	if err != nil || last == 0 {
		return msgs
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		t.Fatalf("read %q back: %v", subject, err)
	}
	for {
		batch, err := cons.Fetch(4096, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			t.Fatalf("read %q back: %v", subject, err)
		}
		for m := range batch.Messages() {
			meta, err := m.Metadata()
			if err != nil {
				t.Fatal(err)
			}
			msgs[meta.Sequence.Stream] = string(m.Data())
			if meta.Sequence.Stream == last {
				return msgs
			}
		}
		switch err := batch.Error(); {
		case errors.Is(err, nats.ErrNoResponders):
			// On a cluster, a pull can come before the new consumer listens.
			time.Sleep(20 * time.Millisecond)
		case err != nil && !errors.Is(err, nats.ErrTimeout):
			t.Fatalf("read %q back: %v", subject, err)
		}
	}
}

// subjectSeqs are the stream sequences of the messages on subject, in
// order.
func subjectSeqs(t *testing.T, js jetstream.JetStream, stream, subject string) []uint64 {
	t.Helper()
	return slices.Sorted(maps.Keys(subjectMessages(t, js, stream, subject)))
}

func TestFenceSubject(t *testing.T) {
	tests := []struct{ stream, key, want string }{
		{"TX", "job.out.0", "_platform.fence.TX.job.out.0"},
		{"TX", "0f3c-9a_b.sink 1.12", "_platform.fence.TX.0f3c-9a_b.sink_1.12"},
		{"my-stream", "a..b", "_platform.fence.my-stream.a._.b"},
		{"TX", "job.$dlq.map*.>", "_platform.fence.TX.job._dlq.map_._"},
		{"TX", "jöb.\tx.", "_platform.fence.TX.j_b._x._"},
	}
	for _, tt := range tests {
		if got := FenceSubject(tt.stream, tt.key); got != tt.want {
			t.Errorf("FenceSubject(%q, %q) = %q, want %q", tt.stream, tt.key, got, tt.want)
		}
	}
}

func TestSubjectCovers(t *testing.T) {
	tests := []struct {
		filter, pattern string
		want            bool
	}{
		{">", "_platform.fence.TX.>", true},
		{"_platform.>", "_platform.fence.TX.>", true},
		{"_platform.fence.*.>", "_platform.fence.TX.>", true},
		{"_platform.fence.TX.>", "_platform.fence.TX.>", true},
		{"_platform.fence.TX.>", "_platform.fence.TX.job.out.0", true},
		{"_platform.fence.TX.*", "_platform.fence.TX.>", false},
		{"_platform.fence.TX.*", "_platform.fence.TX.job", true},
		{"_platform.fence.TX2.>", "_platform.fence.TX.>", false},
		{"tx.>", "_platform.fence.TX.>", false},
		{"_platform.fence.TX.>", "_platform.fence.TX", false},
		{"_platform.fence.TX", "_platform.fence.TX.a", false},
	}
	for _, tt := range tests {
		if got := subjectCovers(tt.filter, tt.pattern); got != tt.want {
			t.Errorf("subjectCovers(%q, %q) = %v, want %v", tt.filter, tt.pattern, got, tt.want)
		}
	}
}

// TestTakeFenceMakesTheStreamFenceable: a stream without atomic publish or
// fence subjects gets both with the first fence, and is left alone after;
// each fence is the last message on its subject.
func TestTakeFenceMakesTheStreamFenceable(t *testing.T) {
	ts := startServer(t)
	newTxStream(t, ts, time.Minute)
	ctx := testCtx(t)
	if _, err := NewTxSink(ctx, ts.js, TxSinkConfig{Subject: "tx.out", Prefix: "p", Fence: &Fence{Subject: FenceSubject("TX", "p"), Seq: 1}}); err == nil {
		t.Fatal("a fenced sink was made on a stream that does not allow atomic publish")
	}
	var fences []*Fence
	for range 3 {
		fences = append(fences, takeTestFence(t, ts.js, "job.out.0"))
	}
	other := takeTestFence(t, ts.js, "job.out.1")
	want := []Fence{
		{Subject: "_platform.fence.TX.job.out.0", Seq: 1},
		{Subject: "_platform.fence.TX.job.out.0", Seq: 2},
		{Subject: "_platform.fence.TX.job.out.0", Seq: 3},
	}
	for i, f := range fences {
		if *f != want[i] {
			t.Fatalf("fence %d is %v, want %v", i, f, &want[i])
		}
	}
	if other.Subject != "_platform.fence.TX.job.out.1" || other.Seq != 4 {
		t.Fatalf("fence of another subtask: %v", other)
	}
	st, err := ts.js.Stream(ctx, "TX")
	if err != nil {
		t.Fatal(err)
	}
	cfg := st.CachedInfo().Config
	if !cfg.AllowAtomicPublish || !slices.Equal(cfg.Subjects, []string{"tx.>", "_platform.fence.TX.>"}) {
		t.Fatalf("stream allows atomic publish %v, subjects %q", cfg.AllowAtomicPublish, cfg.Subjects)
	}
	if seqs := subjectSeqs(t, ts.js, "TX", fences[0].Subject); !slices.Equal(seqs, []uint64{1, 2, 3}) {
		t.Fatalf("fence subject holds sequences %v, want [1 2 3]", seqs)
	}
}

// TestTakeFenceRetriesAConflict: a third writer that fences between
// TakeFence's read and its write makes the write fail; TakeFence reads
// again and takes the fence after the third writer's.
func TestTakeFenceRetriesAConflict(t *testing.T) {
	ts := startServer(t)
	newTxStream(t, ts, time.Minute)
	ctx := testCtx(t)
	first := takeTestFence(t, ts.js, "job.out.0")
	var attempts []int
	var third uint64
	f, err := takeFence(ctx, ts.js, "tx.out", "job.out.0", func(attempt int) {
		attempts = append(attempts, attempt)
		if attempt == 0 {
			ack, err := ts.js.Publish(ctx, first.Subject, []byte("third"))
			if err != nil {
				t.Error(err)
				return
			}
			third = ack.Sequence
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(attempts, []int{0, 1}) || third != 2 || f.Seq != 3 {
		t.Fatalf("attempts %v, third writer at %d, fence %v", attempts, third, f)
	}
	if seqs := subjectSeqs(t, ts.js, "TX", f.Subject); !slices.Equal(seqs, []uint64{1, 2, 3}) {
		t.Fatalf("fence subject holds sequences %v, want [1 2 3]", seqs)
	}
}

// TestTakeFenceConcurrently: owners taking one fence at once all get one,
// each at a sequence of its own, and the last of them is the one whose
// sink commits.
func TestTakeFenceConcurrently(t *testing.T) {
	ts := startServer(t)
	newTxStream(t, ts, time.Minute)
	takeTestFence(t, ts.js, "job.out.0") // the stream is made fenceable once
	const owners = 4
	fences := make([]*Fence, owners)
	errs := make([]error, owners)
	var wg sync.WaitGroup
	for i := range owners {
		wg.Go(func() {
			fences[i], errs[i] = TakeFence(context.Background(), ts.js, "tx.out", "job.out.0")
		})
	}
	wg.Wait()
	var seqs []uint64
	for i := range owners {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		seqs = append(seqs, fences[i].Seq)
	}
	slices.Sort(seqs)
	if !slices.Equal(seqs, []uint64{2, 3, 4, 5}) {
		t.Fatalf("fences at %v, want [2 3 4 5]", seqs)
	}
	for i, f := range fences {
		s := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Fence: f})
		err := commitEpoch(t, s, int64(i+1), txRecords(0, 10))
		if f.Seq == 5 && err != nil || f.Seq != 5 && !errors.Is(err, ErrFenced) {
			t.Fatalf("commit under fence %v: %v", f, err)
		}
	}
	if got := len(subjectSeqs(t, ts.js, "TX", "tx.out")); got != 10 {
		t.Fatalf("sink subject holds %d messages, want 10", got)
	}
}
