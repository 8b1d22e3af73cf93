package netx

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/exchange"
)

// cancelled is a context that is already done.
var cancelled = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// faultyPublish wraps publish so that the nth message of subject that
// carries data or an event meets fault: dropped, published twice, or
// swapped with the message after it. Backlog announcements are not
// counted, since whether one goes out depends on when credit comes back.
// The second result is the faulted message's sequence number, once it has
// gone.
func faultyPublish(publish func(string, []byte) error, subject string, n uint64, fault string) (func(string, []byte) error, func() uint64) {
	var (
		mu      sync.Mutex
		count   uint64
		kept    []byte
		faulted uint64
	)
	faultyPub := func(subj string, data []byte) error {
		if subj != subject || data[1] == kindHello || data[1] == kindTail || data[1]&^flagOvertakes == byte(exchange.KindBacklog) {
			return publish(subj, data)
		}
		mu.Lock()
		defer mu.Unlock()
		count++
		if count == n {
			faulted = binary.BigEndian.Uint64(data[2:10])
		}
		switch {
		case count == n && fault == "drop":
			return nil
		case count == n && fault == "repeat":
			if err := publish(subj, data); err != nil {
				return err
			}
		case count == n && fault == "swap":
			kept = append([]byte(nil), data...)
			return nil
		case count == n+1 && kept != nil:
			if err := publish(subj, data); err != nil {
				return err
			}
			data = kept
		}
		return publish(subj, data)
	}
	return faultyPub, func() uint64 {
		mu.Lock()
		defer mu.Unlock()
		return faulted
	}
}

// TestSequenceFailures: a message lost, repeated or out of order on a
// channel fails its gate with a SequenceError naming the channel and the
// sequence numbers, and reports it through Config.Failed.
func TestSequenceFailures(t *testing.T) {
	url := startServer(t)
	a, b := connect(t, url, "worker-a"), connect(t, url, "worker-b")
	for _, tc := range []struct {
		fault string
		// n is the message the fault hits; the gate wants the message
		// want after it (0: the faulted one) and gets the one got after it.
		n, want, got uint64
	}{
		{"drop", 5, 0, 1},
		{"repeat", 5, 1, 0},
		{"swap", 5, 0, 1},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			ctx := testCtx(t)
			cfg := exchange.Config{BufferSize: 128, BufferTimeout: 0}
			failed := make(chan error, 1)
			job := "gap" + tc.fault
			addr := Address{Job: job, Run: 1, Edge: "e", From: 0, To: 0}
			out, in := exchange.NewEdge(cfg, 1, 1), exchange.NewEdge(cfg, 1, 1)
			g := exchange.NewGate(cfg, in.Channels(0))
			r, err := NewReceiver(b, Config{Exchange: cfg, Failed: func(err error) { failed <- err }}, Link{Address: addr, Channel: in.Channels(0)[0]})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			publish, faulted := faultyPublish(a.Publish, addr.Subject(), tc.n, tc.fault)
			s, err := NewSender(a, Config{Exchange: cfg, publish: publish}, Link{Address: addr, Channel: out.Channels(0)[0]})
			if err != nil {
				t.Fatal(err)
			}
			// The writer never ends: close at once.
			defer s.Close(cancelled)
			// The consumer reads while the producer sends a record a
			// message, until the gate fails.
			w := out.Writer(0)
			go func() {
				for i := 0; ctx.Err() == nil && r.Err() == nil; i++ {
					if err := w.Emit(ctx, 0, &abi.Record{Value: []byte("v")}); err != nil {
						return
					}
					time.Sleep(time.Millisecond)
				}
			}()
			var gateErr error
			for gateErr == nil {
				var buf *exchange.Buffer
				if buf, gateErr = g.Next(ctx); buf != nil {
					buf.Recycle()
				}
			}
			var se *SequenceError
			if !errors.As(gateErr, &se) {
				t.Fatalf("Next = %v, want a SequenceError", gateErr)
			}
			at := faulted()
			if se.Channel != addr || se.Want != at+tc.want || se.Got != at+tc.got {
				t.Fatalf("SequenceError %+v, want channel %v, want %d, got %d", se, addr, at+tc.want, at+tc.got)
			}
			select {
			case err := <-failed:
				if err != gateErr {
					t.Fatalf("Failed got %v, the gate %v", err, gateErr)
				}
			case <-ctx.Done():
				t.Fatal("Failed was not called")
			}
			if r.Err() != gateErr {
				t.Fatalf("Receiver.Err = %v", r.Err())
			}
			t.Log(gateErr)
		})
	}
}

// TestLostLastMessage: the last message of a channel lost, a record
// before the channel goes quiet or its end of partition, fails the gate
// with a SequenceError too: the sender's tail, repeated every Refresh until
// the receiver says it has the last message, shows the loss no later
// message would. A sender whose end was lost is not confirmed, and its
// Close says so.
func TestLostLastMessage(t *testing.T) {
	url := startServer(t)
	a, b := connect(t, url, "worker-a"), connect(t, url, "worker-b")
	for _, tc := range []struct {
		name    string
		records int
		end     bool
	}{
		{"last record, then quiet", 3, false},
		{"end of partition", 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			cfg := exchange.Config{BufferSize: 128, BufferTimeout: 0}
			addr := Address{Job: "tail", Run: uint64(tc.records), Edge: "e", From: 0, To: 0}
			out, in := exchange.NewEdge(cfg, 1, 1), exchange.NewEdge(cfg, 1, 1)
			g := exchange.NewGate(cfg, in.Channels(0))
			r, err := NewReceiver(b, Config{Exchange: cfg, Refresh: 20 * time.Millisecond}, Link{Address: addr, Channel: in.Channels(0)[0]})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			// The last message: each record is one, the end one more.
			last := uint64(tc.records)
			if tc.end {
				last++
			}
			publish, dropped := faultyPublish(a.Publish, addr.Subject(), last, "drop")
			s, err := NewSender(a, Config{Exchange: cfg, Refresh: 20 * time.Millisecond, publish: publish}, Link{Address: addr, Channel: out.Channels(0)[0]})
			if err != nil {
				t.Fatal(err)
			}
			w := out.Writer(0)
			for range tc.records {
				if err := w.Emit(ctx, 0, &abi.Record{Value: []byte("v")}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.end {
				if err := w.Close(ctx); err != nil {
					t.Fatal(err)
				}
			}
			got := 0
			var gateErr error
			for gateErr == nil {
				var buf *exchange.Buffer
				if buf, gateErr = g.Next(ctx); buf != nil {
					got++
					buf.Recycle()
				}
			}
			var se *SequenceError
			at := dropped()
			if !errors.As(gateErr, &se) || se.Channel != addr || se.Want != at || se.Sent != at {
				t.Fatalf("Next = %v, want a SequenceError: message %d lost, %d sent", gateErr, at, at)
			}
			if want := int(last) - 1; got != want {
				t.Fatalf("%d buffers before the failure, want %d", got, want)
			}
			closeCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			err = s.Close(closeCtx)
			if tc.end && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Close = %v, want the end unconfirmed", err)
			}
			t.Log(gateErr)
		})
	}
}

// TestProtocolViolations: a message its sender had no right to send, or
// that does not decode, fails the gate with exchange.ErrProtocol.
func TestProtocolViolations(t *testing.T) {
	url := startServer(t)
	a, b := connect(t, url, "worker-a"), connect(t, url, "worker-b")
	frame := abi.AppendRecord(abi.AppendInputHeader(nil, 1), &abi.Record{Value: []byte("x")})
	data := func(seq uint64) []byte {
		m, err := appendParcel(nil, seq, exchange.Parcel{Kind: exchange.KindData, Data: frame})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, tc := range []struct {
		name     string
		messages [][]byte
	}{
		// Two exclusive credits, no backlog announced: the third buffer
		// has no credit.
		{"beyond credit", [][]byte{data(1), data(2), data(3)}},
		{"short", [][]byte{{wireVersion, 0, 0}}},
		{"other version", [][]byte{append([]byte{9}, data(1)[1:]...)}},
		{"oversized", [][]byte{append(data(1), make([]byte, 300)...)}},
		{"bad event", [][]byte{append(data(1)[:headerSize:headerSize], tagIdle, 7)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			cfg := exchange.Config{BufferSize: 256, ExclusivePerChannel: 2, FloatingPerGate: 1}
			addr := Address{Job: "violation", Run: uint64(len(tc.name)), Edge: tc.name[:3], From: 1, To: 2}
			in := exchange.NewEdge(cfg, 2, 3)
			g := exchange.NewGate(cfg, in.Channels(2))
			r, err := NewReceiver(b, Config{Exchange: cfg}, Link{Address: addr, Channel: in.Channels(2)[1]})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for _, m := range tc.messages {
				if tc.name == "bad event" {
					m[1] = byte(exchange.KindEvent)
				}
				if err := a.Publish(addr.Subject(), m); err != nil {
					t.Fatal(err)
				}
			}
			var gateErr error
			for gateErr == nil {
				var buf *exchange.Buffer
				buf, gateErr = g.Next(ctx)
				_ = buf // held: the consumer keeps what it got
			}
			if !errors.Is(gateErr, exchange.ErrProtocol) {
				t.Fatalf("Next = %v, want ErrProtocol", gateErr)
			}
			t.Log(gateErr)
		})
	}
}

// TestSenderWaitsForReceiver: a sender publishes only hellos until its
// receiver answers, so the first message the receiver sees is number 1
// whenever it starts; Close without an end returns the context's error.
func TestSenderWaitsForReceiver(t *testing.T) {
	url := startServer(t)
	a, b := connect(t, url, "worker-a"), connect(t, url, "worker-b")
	ctx := testCtx(t)
	cfg := exchange.Config{BufferTimeout: 0}
	addr := Address{Job: "late", Run: 3, Edge: "e", From: 0, To: 0}
	out, in := exchange.NewEdge(cfg, 1, 1), exchange.NewEdge(cfg, 1, 1)
	s, err := NewSender(a, Config{Exchange: cfg, Refresh: 50 * time.Millisecond}, Link{Address: addr, Channel: out.Channels(0)[0]})
	if err != nil {
		t.Fatal(err)
	}
	w := out.Writer(0)
	if err := w.EmitEvent(ctx, 0, exchange.Watermark{Time: 7}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)
	g := exchange.NewGate(cfg, in.Channels(0))
	r, err := NewReceiver(b, Config{Exchange: cfg}, Link{Address: addr, Channel: in.Channels(0)[0]})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf, err := g.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if buf.Event() != (exchange.Watermark{Time: 7}) {
		t.Fatalf("first buffer %v, want the watermark", buf.Event())
	}
	buf.Recycle()
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := s.Close(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close before the end = %v, want the deadline", err)
	}
}

func TestAddressValidation(t *testing.T) {
	for _, a := range []Address{
		{Job: "", Edge: "e"},
		{Job: "j.1", Edge: "e"},
		{Job: "j", Edge: "a b"},
		{Job: "j", Edge: "*"},
		{Job: "j", Edge: "e", From: -1},
	} {
		if err := a.validate(); err == nil {
			t.Errorf("%+v: valid, want an error", a)
		}
	}
	a := Address{Job: "j", Run: 2, Edge: "e", From: 1, To: 3}
	if a.Subject() != "_platform.x.j.2.e.1.3" || a.Control() != "_platform.x.j.2.e.1.3.ctl" {
		t.Fatalf("subjects %s and %s", a.Subject(), a.Control())
	}
	if err := checkLinks([]Link{{Address: a, Channel: &exchange.InputChannel{}}, {Address: a, Channel: &exchange.InputChannel{}}}); err == nil {
		t.Fatal("a channel listed twice passed")
	}
}

// TestSlowConsumerFails: when the NATS client drops messages of a channel
// (a handler held up past the pending limits), the receiver fails the gate
// at once, without waiting for a later message to show the gap.
func TestSlowConsumerFails(t *testing.T) {
	url := startServer(t)
	a, b := connect(t, url, "worker-a"), connect(t, url, "worker-b")
	ctx := testCtx(t)
	cfg := exchange.Config{BufferSize: 256, ExclusivePerChannel: 1, FloatingPerGate: 1, BuffersPerWriter: 1}
	addr := Address{Job: "slow", Run: 1, Edge: "e", From: 0, To: 0}
	in := exchange.NewEdge(cfg, 1, 1)
	g := exchange.NewGate(cfg, in.Channels(0))
	hold := make(chan struct{})
	held := make(chan struct{})
	// The overtaking barrier's callback holds the subscription's
	// goroutine, as a stalled handler would.
	overtaken := func(int, exchange.Event, []byte) {
		close(held)
		<-hold
	}
	r, err := NewReceiver(b, Config{Exchange: cfg, Overtaken: overtaken}, Link{Address: addr, Channel: in.Channels(0)[0]})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	frame := abi.AppendRecord(abi.AppendInputHeader(nil, 1), &abi.Record{Value: []byte("x")})
	for seq, p := range []exchange.Parcel{
		{Kind: exchange.KindData, Data: frame},
		{Kind: exchange.KindEvent, Event: exchange.Barrier{}, Overtakes: true},
	} {
		m, err := appendParcel(nil, uint64(seq+1), p)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Publish(addr.Subject(), m); err != nil {
			t.Fatal(err)
		}
	}
	<-held
	msgs, _ := Config{Exchange: cfg}.sizes().pendingLimits()
	for range 2 * msgs {
		if err := a.Publish(addr.Subject(), appendHello(nil)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the slow consumer", func() bool { return r.Err() != nil })
	close(hold)
	var gateErr error
	for gateErr == nil {
		_, gateErr = g.Next(ctx)
	}
	if !errors.Is(gateErr, nats.ErrSlowConsumer) {
		t.Fatalf("Next = %v, want the slow consumer", gateErr)
	}
	t.Log(gateErr)
}
