package netx

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"wasmstream.io/platform/runtime/exchange"
)

// Receiver feeds channels of gates from their senders in other processes:
// it subscribes to each channel's data subject, checks that the messages
// come one after the other by sequence number, hands them to the gate as an
// in-process writer would, and announces on the control subject the
// credits the gate grants and the buffers its consumer recycled.
//
// The NATS client runs one goroutine per data subscription, which checks
// and hands over its messages; the receiver runs one more that publishes
// announcements, and one per subscription that watches for the client
// dropping messages.
type Receiver struct {
	nc    *nats.Conn
	cfg   Config
	sz    sizes
	chans []*recvChannel
	// kick wakes the announcing goroutine; stop ends it, done tells it has.
	kick   chan struct{}
	stop   chan struct{}
	done   chan struct{}
	fail   failure
	closed sync.Once
}

// recvChannel is one channel of a Receiver.
type recvChannel struct {
	r       *Receiver
	addr    Address
	control string
	in      *exchange.Inbox
	sub     *nats.Subscription
	// credits and released are the totals to announce; the gate's
	// callbacks grow them with the gate's mutex held. dirty: they changed
	// since last announced, or the sender said hello.
	credits, released atomic.Uint64
	dirty             atomic.Bool
	ended             atomic.Bool
	// received is the last sequence number received in order, announced
	// so that the sender knows its last message arrived.
	received atomic.Uint64
	// next is the sequence number expected and failed whether the channel
	// failed; both belong to the subscription's goroutine.
	next   uint64
	failed bool
}

// NewReceiver starts receiving links' channels over nc. Each channel must be
// a channel of a consumer's gate (after NewGate) that no writer of this
// process sends on; it is fed by the receiver from then on. A failure of
// any channel fails the receiver and every gate it feeds: Gate.Next
// returns the error. The sender may start before or after.
func NewReceiver(nc *nats.Conn, cfg Config, links ...Link) (*Receiver, error) {
	if err := checkLinks(links); err != nil {
		return nil, err
	}
	r := &Receiver{nc: nc, cfg: cfg, sz: cfg.sizes(), kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	r.fail.report = cfg.Failed
	msgs, bytes := r.sz.pendingLimits()
	for _, l := range links {
		rc := &recvChannel{r: r, addr: l.Address, control: l.Address.Control(), next: 1}
		rc.in = exchange.NewInbox(l.Channel, rc.announce)
		r.chans = append(r.chans, rc)
	}
	for _, rc := range r.chans {
		sub, err := nc.Subscribe(rc.addr.Subject(), rc.receive)
		if err == nil {
			err = sub.SetPendingLimits(msgs, bytes)
		}
		if err != nil {
			if sub != nil {
				_ = sub.Unsubscribe()
			}
			_ = r.unsubscribe()
			return nil, fmt.Errorf("netx: channel %s: subscribe to %s: %w", rc.addr, rc.addr.Subject(), err)
		}
		rc.sub = sub
		go rc.watch(sub.StatusChanged(nats.SubscriptionSlowConsumer))
	}
	// The data subscriptions must be at the server before the first
	// announcement lets a sender publish.
	if err := nc.Flush(); err != nil {
		_ = r.unsubscribe()
		return nil, fmt.Errorf("netx: subscribe to data subjects: %w", err)
	}
	go r.announcements()
	r.wake()
	return r, nil
}

// announce is the inbox's callback, with the gate's mutex held.
func (rc *recvChannel) announce(credits, released int) {
	rc.credits.Add(uint64(credits))
	rc.released.Add(uint64(released))
	rc.dirty.Store(true)
	rc.r.wake()
}

// wake wakes the announcing goroutine; it never blocks.
func (r *Receiver) wake() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// announcements publishes each channel's totals when they changed, and
// every channel's that has not ended every Refresh.
func (r *Receiver) announcements() {
	defer close(r.done)
	tick := time.NewTicker(r.cfg.refresh())
	defer tick.Stop()
	var msg []byte
	ok := true
	for {
		refresh := false
		select {
		case <-r.stop:
			return
		case <-r.kick:
		case <-tick.C:
			refresh = true
		}
		if msg, ok = r.announce(msg, refresh); !ok {
			return
		}
	}
}

// announce publishes the totals of each channel that changed, or of every
// channel that has not ended if refresh; it returns false once it failed.
func (r *Receiver) announce(msg []byte, refresh bool) ([]byte, bool) {
	for _, rc := range r.chans {
		if !rc.dirty.Swap(false) && (!refresh || rc.ended.Load()) {
			continue
		}
		msg = appendControl(msg[:0], announcement{credits: rc.credits.Load(), released: rc.released.Load(), received: rc.received.Load()})
		if err := r.nc.Publish(rc.control, msg); err != nil {
			r.failWith(fmt.Errorf("netx: channel %s: publish credits: %w", rc.addr, err))
			return msg, false
		}
	}
	return msg, true
}

// receive checks and hands over a message of the channel, on the NATS
// client's goroutine of its data subscription.
func (rc *recvChannel) receive(m *nats.Msg) {
	if rc.failed {
		return
	}
	seq, p, sig, err := decodeParcel(m.Data, rc.r.sz.maxRecord)
	switch {
	case err != nil && seq == 0:
		rc.failWith(fmt.Errorf("netx: channel %s: %w", rc.addr, err))
		return
	case err != nil:
		rc.failWith(fmt.Errorf("netx: channel %s: message %d: %w", rc.addr, seq, err))
		return
	case sig == signalHello:
		rc.dirty.Store(true)
		rc.r.wake()
		return
	case sig == signalTail && seq >= rc.next:
		// The messages up to the tail come before it on the subject:
		// those not here were lost.
		rc.failWith(&SequenceError{Channel: rc.addr, Want: rc.next, Got: seq + 1, Sent: seq})
		return
	case sig == signalTail:
		// Answered, so that the sender knows its last message arrived.
		rc.dirty.Store(true)
		rc.r.wake()
		return
	case seq != rc.next:
		rc.failWith(&SequenceError{Channel: rc.addr, Want: rc.next, Got: seq})
		return
	case len(p.Data) > rc.r.sz.buffer:
		rc.failWith(fmt.Errorf("netx: channel %s: message %d: %w: %d bytes, buffers hold %d", rc.addr, seq, exchange.ErrProtocol, len(p.Data), rc.r.sz.buffer))
		return
	}
	rc.next++
	rc.received.Store(seq)
	var save func(int, []byte)
	if p.Overtakes && rc.r.cfg.Overtaken != nil {
		ev, overtaken := p.Event, rc.r.cfg.Overtaken
		save = func(channel int, frame []byte) { overtaken(channel, ev, frame) }
	}
	if err := rc.in.Receive(p, save); err != nil {
		rc.failWith(fmt.Errorf("netx: channel %s: message %d: %w", rc.addr, seq, err))
		return
	}
	if _, end := p.Event.(exchange.EndOfPartition); end {
		rc.ended.Store(true)
		// The sender waits for it before it closes.
		rc.dirty.Store(true)
		rc.r.wake()
	}
}

// watch fails the channel if the NATS client drops a message of it, which
// it does past the pending limits (a slow consumer): a loss the sequence
// numbers would only show at the next message, if one came.
func (rc *recvChannel) watch(status <-chan nats.SubStatus) {
	for st := range status {
		if st == nats.SubscriptionSlowConsumer {
			rc.r.failWith(fmt.Errorf("netx: channel %s: messages lost: %w", rc.addr, nats.ErrSlowConsumer))
		}
	}
}

// failWith fails the receiver from the subscription's goroutine, which
// then ignores the channel's messages.
func (rc *recvChannel) failWith(err error) {
	rc.failed = true
	rc.r.failWith(err)
}

// failWith fails the receiver on its first failure: every gate it feeds
// fails with err.
func (r *Receiver) failWith(err error) {
	if r.fail.set(err) {
		for _, rc := range r.chans {
			rc.in.Fail(err)
		}
	}
}

// Err is the failure of the receiver, nil while there is none.
func (r *Receiver) Err() error { return r.fail.get() }

// Close stops the receiver: it publishes the announcements still due (the
// end of a channel's partition received, which its sender waits for), drops
// its subscriptions and stops announcing. The gate keeps what it received.
// Close the receiver once the gate's consumer is done, after Next returned
// io.EOF or the task failed.
func (r *Receiver) Close() error {
	var err error
	r.closed.Do(func() {
		close(r.stop)
		<-r.done
		if r.Err() == nil {
			_, _ = r.announce(nil, false)
		}
		err = r.unsubscribe()
	})
	return err
}

// unsubscribe drops the data subscriptions.
func (r *Receiver) unsubscribe() error {
	var errs []error
	for _, rc := range r.chans {
		if rc.sub != nil {
			if err := rc.sub.Unsubscribe(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
				errs = append(errs, fmt.Errorf("netx: channel %s: unsubscribe: %w", rc.addr, err))
			}
		}
	}
	return errors.Join(errs...)
}
