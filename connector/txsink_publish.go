package connector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

// ErrAckTimeout is a commit whose acknowledgements stopped arriving for
// publishAckTimeout, for example because the connection was lost.
var ErrAckTimeout = errors.New("no acknowledgement within the timeout")

// commitPublisher publishes a transactional sink's commits with plain NATS
// publishes that all carry one reply subject, and counts the JetStream
// acknowledgements arriving there. A commit only needs to know that every
// message was stored, and in which order acknowledgements come does not
// matter; the JetStream client's async publish instead pays per message for
// a future, a timer, a reply subject, a map entry and a JSON decode.
//
// The committer goroutine calls publish and await; the subscription's
// goroutine calls onAck.
type commitPublisher struct {
	nc  *nats.Conn
	sub *nats.Subscription
	// msg, its header and vals are reused for every message: PublishMsg
	// copies them out before it returns.
	msg  nats.Msg
	vals [3]string
	// own: the header holds the previous record's own headers.
	own   bool
	text  []byte
	timer *time.Timer

	// sent counts publishes (committer only); acked counts
	// acknowledgements; wakeAt is the count await waits for, and onAck
	// signals wake once it is reached.
	sent   int64
	acked  atomic.Int64
	wakeAt atomic.Int64
	wake   chan struct{}

	mu  sync.Mutex
	err error
}

func newCommitPublisher(nc *nats.Conn, subject string) (*commitPublisher, error) {
	p := &commitPublisher{
		nc: nc, wake: make(chan struct{}, 1),
		msg:   nats.Msg{Subject: subject, Reply: nc.NewInbox(), Header: nats.Header{}},
		timer: time.NewTimer(time.Hour),
	}
	p.timer.Stop()
	sub, err := nc.Subscribe(p.msg.Reply, p.onAck)
	if err != nil {
		return nil, fmt.Errorf("connector: sink to %q: subscribe to acknowledgements: %w", subject, err)
	}
	p.sub = sub
	return p, nil
}

// onAck counts one acknowledgement and keeps the first error one carries.
func (p *commitPublisher) onAck(m *nats.Msg) {
	if err := ackError(m); err != nil {
		p.mu.Lock()
		if p.err == nil {
			p.err = err
		}
		p.mu.Unlock()
		p.signal()
	}
	if p.acked.Add(1) >= p.wakeAt.Load() {
		p.signal()
	}
}

func (p *commitPublisher) signal() {
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

// publish sends the message of record r with Nats-Msg-Id id. r was checked
// by validRecord when it was staged.
func (p *commitPublisher) publish(r *abi.Record, id []byte) error {
	h := p.msg.Header
	if p.own || len(r.Headers) > 0 {
		clear(h)
		for _, hd := range r.Headers {
			name := string(hd.Name)
			h[name] = append(h[name], string(hd.Value))
		}
		p.own = len(r.Headers) > 0
	}
	// One string holds the key, the id and the timestamp. It aliases text
	// instead of copying it: PublishMsg encodes the header before it
	// returns, and text is only rewritten for the next message.
	p.text = append(append(p.text[:0], r.Key...), id...)
	p.text = strconv.AppendInt(p.text, r.Timestamp, 10)
	text := unsafe.String(unsafe.SliceData(p.text), len(p.text))
	keyEnd, idEnd := len(r.Key), len(r.Key)+len(id)
	p.vals = [3]string{text[:keyEnd], text[keyEnd:idEnd], text[idEnd:]}
	h[HeaderKey] = p.vals[0:1:1]
	h[nats.MsgIdHdr] = p.vals[1:2:2]
	h[HeaderTimestamp] = p.vals[2:3:3]
	p.msg.Data = r.Value
	if err := p.nc.PublishMsg(&p.msg); err != nil {
		return err
	}
	p.sent++
	return nil
}

// await waits until at most n publishes are unacknowledged, or an
// acknowledgement reported an error, or none arrived for publishAckTimeout.
func (p *commitPublisher) await(ctx context.Context, n int64) error {
	target := p.sent - n
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

func (p *commitPublisher) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *commitPublisher) close() {
	p.timer.Stop()
	_ = p.sub.Unsubscribe()
}
