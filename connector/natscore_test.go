package connector

import (
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"wasmstream.io/platform/abi"
)

// The core NATS source reads what is published while it is subscribed,
// with the messages' headers; a queue group shares the messages.
func TestNATSSource(t *testing.T) {
	ts := startServer(t)
	src, err := NewNATSSource(ts.nc, NATSSourceConfig{Subject: "in.>"})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	m := nats.NewMsg("in.a")
	m.Data = []byte("v0")
	m.Header.Set("H", "x")
	if err := ts.nc.PublishMsg(m); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"v1", "v2"} {
		if err := ts.nc.Publish("in.b", []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	got := readN(t, src, 3)
	if got[0].value != "v0" || got[0].headers != "H=x" || got[1].value != "v1" || got[2].value != "v2" || got[2].ts <= 0 {
		t.Fatalf("got %+v", got)
	}
	if src.Lag() != 0 || src.Dropped() != 0 {
		t.Fatalf("lag %d dropped %d", src.Lag(), src.Dropped())
	}

	a, err := NewNATSSource(ts.nc, NATSSourceConfig{Subject: "q", Queue: "g"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := NewNATSSource(ts.nc, NATSSourceConfig{Subject: "q", Queue: "g"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const n = 200
	for i := range n {
		if err := ts.nc.Publish("q", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ts.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if total := a.Lag() + b.Lag(); total != n {
		t.Fatalf("queue group members hold %d messages, want %d", total, n)
	}
}

// A source that falls Pending messages behind has the client drop the
// rest, and says so.
func TestNATSSourceDropsWhenBehind(t *testing.T) {
	ts := startServer(t)
	src, err := NewNATSSource(ts.nc, NATSSourceConfig{Subject: "in", Pending: 10})
	if err != nil {
		t.Fatal(err)
	}
	for range 25 {
		if err := ts.nc.Publish("in", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := ts.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if src.Lag() != 10 || src.Dropped() != 15 {
		t.Fatalf("lag %d dropped %d, want 10 and 15", src.Lag(), src.Dropped())
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if src.Dropped() != 15 {
		t.Fatalf("dropped %d after close, want 15", src.Dropped())
	}
	var b abi.Batch
	if err := src.Fetch(testCtx(t), &b, 1, 0); err != ErrClosed {
		t.Fatalf("fetch after close: %v", err)
	}
}

// The core NATS sink publishes values with the key and timestamp headers.
func TestNATSSink(t *testing.T) {
	ts := startServer(t)
	sub, err := ts.nc.SubscribeSync("out")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewNATSSink(ts.nc, "out")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	recs := []abi.Record{{Key: []byte("k1"), Value: []byte("a"), Timestamp: 5}, {Key: []byte("k2"), Value: []byte("b"), Timestamp: 6,
		Headers: []abi.Header{{Name: []byte("H"), Value: []byte("y")}}}}
	if err := s.Write(testCtx(t), recs); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range recs {
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(m.Data)+"|"+m.Header.Get(HeaderKey)+"|"+m.Header.Get(HeaderTimestamp)+"|"+m.Header.Get("H"))
	}
	if want := []string{"a|k1|5|", "b|k2|6|y"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if _, err := NewNATSSink(ts.nc, "out.*"); err == nil {
		t.Fatal("wildcard subject: no error")
	}
}
