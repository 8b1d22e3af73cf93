package connector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

// ErrAckTimeout is a publish whose acknowledgements stopped arriving for
// publishAckTimeout, for example because the connection was lost.
var ErrAckTimeout = errors.New("no acknowledgement within the timeout")

// ackPublisher publishes a sink's messages with plain NATS publishes that
// all carry one reply subject, and counts the JetStream acknowledgements
// arriving there. A sink only needs to know that every message was stored
// and which error came first, not which acknowledgement belongs to which
// message; the JetStream client's async publish instead pays per message for
// a future, a timer, a reply subject of its own (which the server matches
// without its subject cache), a map entry and a JSON decode.
//
// One goroutine (the sink's) calls publish, inFlight and await; the
// subscription's goroutine calls onAck.
type ackPublisher struct {
	nc  *nats.Conn
	sub *nats.Subscription
	// msg is reused for every message: PublishMsg encodes it before it
	// returns. hdr builds its header (with Nats-Msg-Id when the publisher
	// adds ids).
	msg   nats.Msg
	hdr   recordHeaders
	timer *time.Timer

	// sent counts publishes (the sink's goroutine only); acked counts
	// acknowledgements; wakeAt is the count await waits for (MaxInt64 while
	// it does not wait), and onAck signals wake once it is reached.
	sent   int64
	acked  atomic.Int64
	wakeAt atomic.Int64
	wake   chan struct{}
	// dups counts acknowledgements of messages the stream already had.
	dups atomic.Int64

	mu  sync.Mutex
	err error
}

// newAckPublisher subscribes to a new reply subject on nc for publishes to
// subject; ids adds a Nats-Msg-Id header to every message.
func newAckPublisher(nc *nats.Conn, subject string, ids bool) (*ackPublisher, error) {
	p := &ackPublisher{
		nc: nc, wake: make(chan struct{}, 1),
		msg:   nats.Msg{Subject: subject, Reply: nc.NewInbox()},
		timer: time.NewTimer(time.Hour),
	}
	p.timer.Stop()
	p.wakeAt.Store(math.MaxInt64)
	p.hdr.init(ids, false)
	sub, err := nc.Subscribe(p.msg.Reply, p.onAck)
	if err != nil {
		return nil, fmt.Errorf("connector: sink to %q: subscribe to acknowledgements: %w", subject, err)
	}
	p.sub = sub
	return p, nil
}

// onAck counts one acknowledgement and keeps the first error one carries.
func (p *ackPublisher) onAck(m *nats.Msg) {
	if err := ackError(m); err != nil {
		p.mu.Lock()
		if p.err == nil {
			p.err = err
		}
		p.mu.Unlock()
		p.signal()
	}
	if bytes.Contains(m.Data, []byte(`"duplicate":true`)) {
		p.dups.Add(1)
	}
	if p.acked.Add(1) >= p.wakeAt.Load() {
		p.signal()
	}
}

func (p *ackPublisher) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// ackError is the error an acknowledgement reports, if any. Only an
// acknowledgement mentioning "error" is decoded.
func ackError(m *nats.Msg) error {
	if len(m.Data) == 0 {
		if m.Header.Get("Status") == "503" {
			return jetstream.ErrNoStreamResponse
		}
		return fmt.Errorf("%w: status %q", jetstream.ErrInvalidJSAck, m.Header.Get("Status"))
	}
	if !bytes.Contains(m.Data, []byte(`"error"`)) {
		return nil
	}
	var resp struct {
		Error *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return fmt.Errorf("%w: %q", jetstream.ErrInvalidJSAck, m.Data)
	}
	if resp.Error != nil {
		return resp.Error
	}
	return nil
}

// aliasString is b as a string without a copy: valid only while b is not
// written to.
func aliasString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// publish sends the message of record r: payload the value, the record's
// headers, Platform-Key and Platform-Timestamp, and Nats-Msg-Id id when the
// publisher adds ids. r must have passed validRecord. Nothing of r is kept
// after publish returns: the header values alias r's key and id, and
// PublishMsg copies the encoded message into the connection's buffer before
// it returns.
func (p *ackPublisher) publish(r *abi.Record, id []byte) error {
	p.msg.Header = p.hdr.header(r, id)
	p.msg.Data = r.Value
	err := p.nc.PublishMsg(&p.msg)
	p.msg.Data = nil
	p.hdr.reset()
	if err != nil {
		return err
	}
	p.sent++
	return nil
}

// inFlight is the number of publishes not yet acknowledged.
func (p *ackPublisher) inFlight() int64 { return p.sent - p.acked.Load() }

// await waits until at most n publishes are unacknowledged, or an
// acknowledgement reported an error, or none arrived for publishAckTimeout.
// It returns ctx's error as it is when ctx ends first.
func (p *ackPublisher) await(ctx context.Context, n int64) error {
	target := p.sent - n
	defer p.wakeAt.Store(math.MaxInt64)
	for {
		if err := p.failure(); err != nil {
			return err
		}
		acked := p.acked.Load()
		if acked >= target {
			return nil
		}
		p.wakeAt.Store(target)
		// onAck adds before it loads wakeAt: an acknowledgement is either
		// seen here or signals.
		if p.acked.Load() >= target {
			continue
		}
		p.timer.Reset(publishAckTimeout)
		select {
		case <-p.wake:
		case <-p.timer.C:
			if p.acked.Load() == acked {
				return fmt.Errorf("%w: %d of %d messages acknowledged", ErrAckTimeout, acked, p.sent)
			}
		case <-ctx.Done():
			p.timer.Stop()
			return ctx.Err()
		}
		p.timer.Stop()
	}
}

// drain waits until every publish is acknowledged, whatever the
// acknowledgements say, or none arrived for publishAckTimeout, or ctx ends:
// after a failed commit nothing it sent is still on its way to the stream,
// to be stored after what a recovery sends.
func (p *ackPublisher) drain(ctx context.Context) {
	defer p.wakeAt.Store(math.MaxInt64)
	for {
		acked := p.acked.Load()
		if acked >= p.sent {
			return
		}
		p.wakeAt.Store(p.sent)
		if p.acked.Load() >= p.sent {
			return
		}
		p.timer.Reset(publishAckTimeout)
		select {
		case <-p.wake:
		case <-p.timer.C:
			if p.acked.Load() == acked {
				return
			}
		case <-ctx.Done():
			p.timer.Stop()
			return
		}
		p.timer.Stop()
	}
}

// failure is the first error an acknowledgement reported.
func (p *ackPublisher) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// close stops receiving acknowledgements.
func (p *ackPublisher) close() {
	p.timer.Stop()
	_ = p.sub.Unsubscribe()
}
