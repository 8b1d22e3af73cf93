package netx

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/exchange"
)

// startServer starts an embedded NATS server for the test and returns its
// URL.
func startServer(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := connector.StartEmbedded(ctx, connector.EmbeddedConfig{DataDir: tb.TempDir(), Port: -1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := srv.Shutdown(context.Background()); err != nil {
			tb.Error(err)
		}
	})
	return srv.ClientURL()
}

// connect opens a connection, one per modelled process.
func connect(tb testing.TB, url, name string) *nats.Conn {
	tb.Helper()
	// The client would print a slow consumer; the receiver reports it.
	nc, err := nats.Connect(url, nats.Name(name), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	return nc
}

// testCtx bounds a test's waits, which a bug would make endless.
func testCtx(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	tb.Cleanup(cancel)
	return ctx
}

// jobs names each test's job differently, so that tests on one server
// never share subjects.
var jobs atomic.Int64

// netEdge is an edge whose producers run in process A and consumers in
// process B: every channel goes over NATS, from a Sender per producer on
// connection a to a Receiver per consumer on connection b.
type netEdge struct {
	out, in   *exchange.Edge
	gates     []*exchange.Gate
	senders   []*Sender
	receivers []*Receiver
	job       string
}

// setup says how to build a netEdge: which side starts first, and the
// sender's and receiver's configs beyond the exchange's.
type setup struct {
	senderFirst bool
	sender      Config
	receiver    Config
}

func newNetEdge(t *testing.T, a, b *nats.Conn, cfg exchange.Config, producers, consumers int, s setup) *netEdge {
	t.Helper()
	e := &netEdge{out: exchange.NewEdge(cfg, producers, consumers), in: exchange.NewEdge(cfg, producers, consumers), job: fmt.Sprintf("test%d", jobs.Add(1))}
	for c := range consumers {
		e.gates = append(e.gates, exchange.NewGate(cfg, e.in.Channels(c)))
	}
	s.sender.Exchange, s.receiver.Exchange = cfg, cfg
	addr := func(p, c int) Address { return Address{Job: e.job, Run: 1, Edge: "e", From: p, To: c} }
	startSenders := func() {
		for p := range producers {
			var links []Link
			for c := range consumers {
				links = append(links, Link{Address: addr(p, c), Channel: e.out.Channels(c)[p]})
			}
			snd, err := NewSender(a, s.sender, links...)
			if err != nil {
				t.Fatal(err)
			}
			e.senders = append(e.senders, snd)
		}
	}
	startReceivers := func() {
		for c := range consumers {
			var links []Link
			for p := range producers {
				links = append(links, Link{Address: addr(p, c), Channel: e.in.Channels(c)[p]})
			}
			r, err := NewReceiver(b, s.receiver, links...)
			if err != nil {
				t.Fatal(err)
			}
			e.receivers = append(e.receivers, r)
		}
	}
	if s.senderFirst {
		startSenders()
		time.Sleep(20 * time.Millisecond)
		startReceivers()
	} else {
		startReceivers()
		startSenders()
	}
	t.Cleanup(func() {
		// A failed test may have left writers unclosed: do not wait long.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		e.close(t, ctx)
	})
	return e
}

// close stops the edge's senders (waiting for their ends until ctx ends)
// and receivers.
func (e *netEdge) close(t *testing.T, ctx context.Context) {
	t.Helper()
	for _, s := range e.senders {
		if err := s.Close(ctx); err != nil && !t.Failed() {
			t.Errorf("Sender.Close: %v", err)
		}
	}
	for _, r := range e.receivers {
		if err := r.Close(); err != nil {
			t.Errorf("Receiver.Close: %v", err)
		}
	}
}

// record is the seq-th record of producer p, its value size bytes.
func record(p, seq, size int) abi.Record {
	v := make([]byte, size)
	for i := range v {
		v[i] = byte(seq + i)
	}
	return abi.Record{Key: fmt.Appendf(nil, "key-%d-%d", p, seq), Value: v, Timestamp: int64(p)<<32 | int64(seq)}
}

// describe names a record by its content.
func describe(r *abi.Record) string {
	return fmt.Sprintf("%s/%d/%08x/%d", r.Key, len(r.Value), crc32.ChecksumIEEE(r.Value), r.Timestamp)
}

// run produces on every writer of e and consumes every gate, and returns
// per consumer and channel what arrived: records described and events as
// "event <v>", EndOfPartition left out, which must come last.
func (e *netEdge) run(t *testing.T, ctx context.Context, producers int, produce func(ctx context.Context, w *exchange.Writer, p int) error) [][][]string {
	t.Helper()
	got := make([][][]string, len(e.gates))
	var wg sync.WaitGroup
	for c, g := range e.gates {
		got[c] = make([][]string, producers)
		wg.Go(func() {
			got[c] = consume(t, ctx, g, producers)
		})
	}
	for p := range producers {
		wg.Go(func() {
			w := e.out.Writer(p)
			if err := produce(ctx, w, p); err != nil {
				t.Errorf("producer %d: %v", p, err)
			}
			if err := w.Close(ctx); err != nil {
				t.Errorf("producer %d: Close: %v", p, err)
			}
		})
	}
	wg.Wait()
	return got
}

// consume reads g until its end.
func consume(t *testing.T, ctx context.Context, g *exchange.Gate, channels int) [][]string {
	got := make([][]string, channels)
	ended := make([]bool, channels)
	var rec abi.Record
	for {
		b, err := g.Next(ctx)
		if errors.Is(err, io.EOF) {
			return got
		}
		if err != nil {
			t.Errorf("Next: %v", err)
			return got
		}
		ch := b.Channel()
		if ended[ch] {
			t.Errorf("channel %d: buffer after EndOfPartition", ch)
		}
		switch ev := b.Event(); ev {
		case nil:
			for b.Next(&rec) {
				got[ch] = append(got[ch], describe(&rec))
			}
		case exchange.EndOfPartition{}:
			ended[ch] = true
		default:
			got[ch] = append(got[ch], fmt.Sprintf("event %v", ev))
		}
		b.Recycle()
	}
}

// compare reports the first difference between per-channel sequences.
func compare(t *testing.T, got, want [][][]string) {
	t.Helper()
	for c := range want {
		for p := range want[c] {
			g, w := got[c][p], want[c][p]
			for i := 0; i < len(g) || i < len(w); i++ {
				switch {
				case i >= len(g):
					t.Fatalf("consumer %d channel %d: missing item %d %q (got %d items, want %d)", c, p, i, w[i], len(g), len(w))
				case i >= len(w):
					t.Fatalf("consumer %d channel %d: extra item %d %q", c, p, i, g[i])
				case g[i] != w[i]:
					t.Fatalf("consumer %d channel %d item %d: got %q, want %q", c, p, i, g[i], w[i])
				}
			}
		}
	}
}

// expect makes an empty [consumer][channel] table.
func expect(producers, consumers int) [][][]string {
	want := make([][][]string, consumers)
	for c := range want {
		want[c] = make([][]string, producers)
	}
	return want
}

// values lists a frame's record values, comma separated.
func values(t *testing.T, frame []byte) string {
	t.Helper()
	ir, err := abi.NewInputReader(frame)
	if err != nil {
		t.Fatal(err)
	}
	var vs []string
	var rec abi.Record
	for ir.Next(&rec) {
		vs = append(vs, string(rec.Value))
	}
	return strings.Join(vs, ",")
}
