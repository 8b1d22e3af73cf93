package connector

import (
	"bytes"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"wasmstream.io/platform/abi"
)

// quietPeer accepts one NATS client, answers its handshake and pings and
// discards everything else it sends, so that what a client allocates can be
// counted with no server running in the process. It returns the URL.
func quietPeer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if _, err := c.Write([]byte(`INFO {"server_id":"quiet","version":"2.15.2","proto":1,"headers":true,"max_payload":1048576}` + "\r\n")); err != nil {
			return
		}
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			if bytes.Contains(buf[:n], []byte("PING\r\n")) {
				if _, err := c.Write([]byte("PONG\r\n")); err != nil {
					return
				}
			}
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
	})
	return "nats://" + ln.Addr().String()
}

// TestAckPublisherAllocations: publishing a record allocates only what the
// NATS client allocates to encode the header (a bytes.Buffer and its
// bytes), with or without a message id or the fence, and for a record with
// headers of its own the strings of those headers.
func TestAckPublisherAllocations(t *testing.T) {
	nc, err := nats.Connect(quietPeer(t), nats.Timeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	plain := abi.Record{Key: []byte("key"), Value: bytes.Repeat([]byte("x"), 100), Timestamp: BaseTimestamp}
	withHeaders := plain
	withHeaders.Headers = []abi.Header{{Name: []byte("Trace"), Value: []byte("abc")}}
	fence := &Fence{Subject: "_platform.fence.OUT.job.out.0", Seq: 7}
	tests := []struct {
		name  string
		ids   bool
		fence *Fence
		rec   *abi.Record
		want  float64
	}{
		{"plain", false, nil, &plain, 2},
		{"plain with ids", true, nil, &plain, 2},
		// And the header's name, its value and the slice holding it.
		{"own headers with ids", true, nil, &withHeaders, 5},
		// Every message expecting the fence allocates no more.
		{"fenced", true, fence, &plain, 2},
	}
	id := []byte("job.out.0.1.12345")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := newAckPublisher(nc, "out.x", tt.ids)
			if tt.fence != nil {
				p, err = newFencedPublisher(nc, "out.x", tt.fence)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer p.close()
			got := testing.AllocsPerRun(1000, func() {
				if err := p.publish(tt.rec, id); err != nil {
					t.Fatal(err)
				}
			})
			if got != tt.want && !raceEnabled {
				t.Fatalf("%v allocations per publish, want %v", got, tt.want)
			}
			if p.sent != 1001 || p.inFlight() != 1001 {
				t.Fatalf("sent %d, in flight %d, want 1001 each", p.sent, p.inFlight())
			}
		})
	}
}

// TestTxSinkPublishesWithIDs: a commit publishes each record's value with its
// headers, Platform-Key, Platform-Timestamp and the deterministic
// Nats-Msg-Id prefix.epoch.index, replacing record headers of those names.
func TestTxSinkPublishesWithIDs(t *testing.T) {
	ts := startServer(t)
	newTxStream(t, ts, time.Minute)
	ctx := testCtx(t)
	s := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.3"})
	recs := []abi.Record{
		{Key: []byte("user-1"), Value: []byte(`{"n":1}`), Timestamp: 1_700_000_000_123},
		{Key: []byte("k"), Value: []byte("with headers"), Timestamp: 7, Headers: []abi.Header{
			{Name: []byte("Trace"), Value: []byte("a")},
			{Name: []byte("Trace"), Value: []byte("b")},
			{Name: []byte(nats.MsgIdHdr), Value: []byte("stale")},
			{Name: []byte(HeaderTimestamp), Value: []byte("stale")},
		}},
		{Value: []byte("no key"), Timestamp: -5},
	}
	for epoch := int64(4); epoch <= 5; epoch++ {
		if err := s.Write(ctx, recs); err != nil {
			t.Fatal(err)
		}
		if err := s.Seal(epoch); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Commit(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, epoch := range []string{"4", "5"} {
		want = append(want,
			`tx.out|{"n":1}|Nats-Msg-Id=job.out.3.`+epoch+`.0;Platform-Key=user-1;Platform-Timestamp=1700000000123`,
			`tx.out|with headers|Nats-Msg-Id=job.out.3.`+epoch+`.1;Platform-Key=k;Platform-Timestamp=7;Trace=a;Trace=b`,
			`tx.out|no key|Nats-Msg-Id=job.out.3.`+epoch+`.2;Platform-Key=;Platform-Timestamp=-5`,
		)
	}
	if got := readBack(t, ts, "TX"); !slices.Equal(got, want) {
		t.Fatalf("stream holds\n%q\nwant\n%q", got, want)
	}
}
