package connector

import (
	"bytes"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"wasmstream.io/platform/abi"
)

// TestBatchPublisherAllocations: a message of an atomic batch allocates only
// what the NATS client allocates to encode the header, as a message of the
// unfenced sink does (TestAckPublisherAllocations).
func TestBatchPublisherAllocations(t *testing.T) {
	nc, err := nats.Connect(quietPeer(t), nats.Timeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	p, err := newBatchPublisher(nc, "out.x", &Fence{Subject: "_platform.fence.OUT.job.out.0", Seq: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	rec := abi.Record{Key: []byte("key"), Value: bytes.Repeat([]byte("x"), 100), Timestamp: BaseTimestamp}
	id := []byte("job.out.0.1.12345")
	p.begin(false)
	got := testing.AllocsPerRun(batchMax-2, func() {
		if err := p.add(&rec, id, false); err != nil {
			t.Fatal(err)
		}
	})
	if got != 2 && !raceEnabled {
		t.Fatalf("%v allocations per message, want 2", got)
	}
}

// TestBatchPublisherHeaders: the first message of a batch expects the
// fence, the last commits it, and every one carries the batch's id and its
// sequence in it; a record's own headers of those names are replaced.
func TestBatchPublisherHeaders(t *testing.T) {
	ts := startServer(t)
	sub, err := ts.nc.SubscribeSync("out.x")
	if err != nil {
		t.Fatal(err)
	}
	p, err := newBatchPublisher(ts.nc, "out.x", &Fence{Subject: "_platform.fence.OUT.job.out.0", Seq: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	rec := abi.Record{Key: []byte("k"), Value: []byte("v"), Headers: []abi.Header{
		{Name: []byte(hdrBatchCommit), Value: []byte("1")},
		{Name: []byte("Nats-Expected-Last-Subject-Sequence"), Value: []byte("3")},
		{Name: []byte("Trace"), Value: []byte("a")},
	}}
	p.begin(false)
	for i, last := range []bool{false, false, true} {
		r := abi.Record{Key: []byte("k"), Value: []byte("v")}
		if i == 1 {
			r = rec
		}
		if err := p.add(&r, []byte("id"), last); err != nil {
			t.Fatal(err)
		}
	}
	batch := p.hdr.vals[valBatchID]
	want := []map[string]string{
		{hdrBatchSeq: "1", "Nats-Expected-Last-Subject-Sequence": "7", "Nats-Expected-Last-Subject-Sequence-Subject": "_platform.fence.OUT.job.out.0"},
		{hdrBatchSeq: "2", "Trace": "a"},
		{hdrBatchSeq: "3", hdrBatchCommit: "1"},
	}
	for i, w := range want {
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		w[hdrBatchID], w[nats.MsgIdHdr], w[HeaderKey], w[HeaderTimestamp] = batch, "id", "k", "0"
		if len(m.Header) != len(w) {
			t.Fatalf("message %d has headers %v, want %v", i, m.Header, w)
		}
		for name, v := range w {
			if got := m.Header.Values(name); len(got) != 1 || got[0] != v {
				t.Fatalf("message %d has headers %v, want %v", i, m.Header, w)
			}
		}
		if last := i == 2; (m.Reply != "") != last {
			t.Fatalf("message %d has reply subject %q", i, m.Reply)
		}
	}
}
