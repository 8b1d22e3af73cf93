package netx

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"wasmstream.io/platform/runtime/exchange"
)

// Sender carries writer channels to their consumers in other processes: it
// publishes each buffer as one message on its channel's data subject, with
// the channel's next sequence number, only against the credit its receiver
// announced on the control subject (events need none), and returns a
// buffer to its writer's pool once the receiver reports it recycled.
//
// One goroutine publishes for all the sender's channels; the NATS client
// runs one more per control subscription.
type Sender struct {
	nc      *nats.Conn
	cfg     Config
	out     *exchange.Outbox
	chans   []*sendChannel
	publish func(subject string, data []byte) error
	// stop asks the publishing goroutine to return; done is closed when it
	// has. ended is closed once every channel has sent its end, confirmed
	// once every receiver has said it received it; unconfirmed counts the
	// channels whose receivers have not.
	stop        atomic.Bool
	done        chan struct{}
	ended       chan struct{}
	confirmed   chan struct{}
	unconfirmed atomic.Int32
	// helloDue asks the publishing goroutine for hellos; hello is its timer.
	helloDue atomic.Bool
	hello    *time.Timer
	// tailDue asks the publishing goroutine for tails, every Refresh.
	tailDue atomic.Bool
	tail    *time.Timer
	fail    failure
	closed  sync.Once
}

// sendChannel is one channel of a Sender.
type sendChannel struct {
	addr    Address
	subject string
	sub     *nats.Subscription
	// open: the receiver answered; the control handler sets it.
	open atomic.Bool
	// mu guards the totals of the receiver's announcements applied so far,
	// and whether the receiver confirmed the end.
	mu                sync.Mutex
	credits, released uint64
	endConfirmed      bool
	// received is the last sequence number the receiver said it received;
	// endSeq the EndOfPartition's, 0 until it is sent.
	received, endSeq atomic.Uint64
	// seq and end belong to the publishing goroutine: the last sequence
	// number sent, and whether EndOfPartition was.
	seq uint64
	end bool
}

// NewSender starts sending links' channels over nc. Each channel must be a
// writer's channel that no gate has, and NewSender must run before the
// writer sends; the channels are the sender's from then on, even when it
// fails. Nothing is published on a channel until its receiver has answered
// the sender's hello, so either side may start first.
func NewSender(nc *nats.Conn, cfg Config, links ...Link) (*Sender, error) {
	if err := checkLinks(links); err != nil {
		return nil, err
	}
	if limit, need := nc.MaxPayload(), cfg.sizes().maxMessage(); int64(need) > limit {
		return nil, fmt.Errorf("netx: buffers of %d bytes need messages of %d bytes, the server allows %d", cfg.sizes().buffer, need, limit)
	}
	s := &Sender{nc: nc, cfg: cfg, publish: cfg.publish, done: make(chan struct{}), ended: make(chan struct{}), confirmed: make(chan struct{})}
	s.unconfirmed.Store(int32(len(links)))
	if s.publish == nil {
		s.publish = nc.Publish
	}
	s.fail.report = cfg.Failed
	channels := make([]*exchange.InputChannel, len(links))
	for i, l := range links {
		channels[i] = l.Channel
		s.chans = append(s.chans, &sendChannel{addr: l.Address, subject: l.Address.Subject()})
	}
	s.out = exchange.NewOutbox(channels...)
	for i, c := range s.chans {
		sub, err := nc.Subscribe(c.addr.Control(), func(m *nats.Msg) { s.control(i, m) })
		if err != nil {
			s.unsubscribe()
			return nil, fmt.Errorf("netx: channel %s: subscribe to %s: %w", c.addr, c.addr.Control(), err)
		}
		c.sub = sub
	}
	// The control subscriptions must be at the server before a hello
	// makes the receiver answer.
	if err := nc.Flush(); err != nil {
		s.unsubscribe()
		return nil, fmt.Errorf("netx: subscribe to control subjects: %w", err)
	}
	s.hello = time.AfterFunc(time.Hour, s.wantHello)
	s.hello.Stop()
	s.helloDue.Store(true)
	s.tail = time.AfterFunc(cfg.refresh(), s.wantTail)
	go s.run()
	return s, nil
}

// run publishes what the outbox hands out until stopped or failed.
func (s *Sender) run() {
	defer close(s.done)
	var (
		msg       []byte
		err       error
		remaining = len(s.chans)
		wait      = firstHello
	)
	for !s.stop.Load() {
		if s.helloDue.Swap(false) {
			if wait, err = s.sayHello(wait); err != nil {
				s.failWith(err)
				return
			}
		}
		if s.tailDue.Swap(false) {
			if msg, err = s.sayTail(msg); err != nil {
				s.failWith(err)
				return
			}
		}
		ch, p, err := s.out.Next(context.Background())
		if errors.Is(err, exchange.ErrWoken) {
			continue
		}
		if err != nil {
			s.failWith(fmt.Errorf("netx: sender: %w", err))
			return
		}
		c := s.chans[ch]
		c.seq++
		if msg, err = appendParcel(msg[:0], c.seq, p); err != nil {
			s.failWith(fmt.Errorf("netx: channel %s: %w", c.addr, err))
			return
		}
		_, end := p.Event.(exchange.EndOfPartition)
		if end && !c.end {
			// Before it is published, for the receiver's answer.
			c.endSeq.Store(c.seq)
		}
		if err := s.publish(c.subject, msg); err != nil {
			s.failWith(fmt.Errorf("netx: channel %s: publish message %d: %w", c.addr, c.seq, err))
			return
		}
		if end && !c.end {
			c.end = true
			if remaining--; remaining == 0 {
				close(s.ended)
			}
		}
	}
}

// sayTail publishes, on every channel whose receiver has not said it
// received the last message sent, that message's sequence number: a
// receiver that lacks it fails, which a lost last message would otherwise
// never make it do.
func (s *Sender) sayTail(msg []byte) ([]byte, error) {
	for _, c := range s.chans {
		if c.seq == 0 || c.received.Load() >= c.seq {
			continue
		}
		msg = appendTail(msg[:0], c.seq)
		if err := s.publish(c.subject, msg); err != nil {
			return msg, fmt.Errorf("netx: channel %s: publish tail: %w", c.addr, err)
		}
	}
	return msg, nil
}

// wantTail runs on the tail timer's goroutine, every Refresh.
func (s *Sender) wantTail() {
	if s.stop.Load() {
		return
	}
	s.tailDue.Store(true)
	s.out.Wakeup()
	s.tail.Reset(s.cfg.refresh())
}

// sayHello publishes a hello on every channel whose receiver has not
// answered yet and, if there is one, schedules the next round after wait;
// it returns the wait after that.
func (s *Sender) sayHello(wait time.Duration) (time.Duration, error) {
	var msg []byte
	waiting := false
	for _, c := range s.chans {
		if c.open.Load() {
			continue
		}
		waiting = true
		msg = appendHello(msg[:0])
		if err := s.publish(c.subject, msg); err != nil {
			return wait, fmt.Errorf("netx: channel %s: publish hello: %w", c.addr, err)
		}
	}
	if waiting {
		s.hello.Reset(wait)
	}
	return min(2*wait, s.cfg.refresh()), nil
}

// wantHello runs on the hello timer's goroutine.
func (s *Sender) wantHello() {
	s.helloDue.Store(true)
	s.out.Wakeup()
}

// control applies an announcement of channel i's receiver, on the NATS
// client's goroutine of the channel's control subscription.
func (s *Sender) control(i int, m *nats.Msg) {
	c := s.chans[i]
	a, err := decodeControl(m.Data)
	if err != nil {
		s.failWith(fmt.Errorf("netx: channel %s: %w", c.addr, err))
		return
	}
	credits, released := a.credits, a.released
	c.mu.Lock()
	defer c.mu.Unlock()
	if a.received > c.received.Load() {
		c.received.Store(a.received)
	}
	if end := c.endSeq.Load(); end != 0 && a.received >= end && !c.endConfirmed {
		c.endConfirmed = true
		if s.unconfirmed.Add(-1) == 0 {
			close(s.confirmed)
		}
	}
	if credits > c.credits {
		s.out.Credit(i, int(credits-c.credits))
		c.credits = credits
	}
	if released > c.released {
		want := int(released - c.released)
		if got := s.out.Release(i, want); got != want {
			s.failWith(fmt.Errorf("netx: channel %s: %w: the receiver released %d buffers, %d were in flight", c.addr, exchange.ErrProtocol, want, got))
			return
		}
		c.released = released
	}
	if !c.open.Load() {
		c.open.Store(true)
		s.out.Open(i)
	}
}

// failWith stops the sender on its first failure.
func (s *Sender) failWith(err error) {
	s.fail.set(err)
	s.stop.Store(true)
	s.out.Wakeup()
}

// Err is the failure that stopped the sender, nil while there is none.
func (s *Sender) Err() error { return s.fail.get() }

// Close waits until every channel has published its EndOfPartition (its
// writer closed) and every receiver has said it received it, the sender
// failed, or ctx is done, then stops the sender and drops its
// subscriptions. Meanwhile the sender repeats its tails, so that a receiver
// whose end was lost fails. Close returns the sender's failure, else ctx's
// error if some channel had not ended or not been confirmed; it does not
// wait for confirmations if ctx is done when it is called.
func (s *Sender) Close(ctx context.Context) error {
	var err error
	s.closed.Do(func() {
		wait := ctx.Err() == nil
		select {
		case <-s.ended:
			if !wait {
				break
			}
			select {
			case <-s.confirmed:
			case <-s.done:
			case <-ctx.Done():
				err = fmt.Errorf("netx: sender closed before every receiver confirmed the end of its partition: %w", ctx.Err())
			}
		case <-s.done:
		case <-ctx.Done():
			err = fmt.Errorf("netx: sender closed before every channel ended: %w", ctx.Err())
		}
		s.stop.Store(true)
		s.out.Wakeup()
		<-s.done
		s.hello.Stop()
		s.tail.Stop()
		s.unsubscribe()
		if f := s.Err(); f != nil {
			err = f
		}
	})
	return err
}

// unsubscribe drops the control subscriptions.
func (s *Sender) unsubscribe() {
	for _, c := range s.chans {
		if c.sub != nil {
			_ = c.sub.Unsubscribe()
		}
	}
}

// failure is an endpoint's first failure, reported once.
type failure struct {
	mu     sync.Mutex
	err    error
	report func(error)
}

// set records err if it is the first failure and reports it; it returns
// whether it was.
func (f *failure) set(err error) bool {
	f.mu.Lock()
	first := f.err == nil
	if first {
		f.err = err
	}
	f.mu.Unlock()
	if first && f.report != nil {
		f.report(err)
	}
	return first
}

func (f *failure) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}
