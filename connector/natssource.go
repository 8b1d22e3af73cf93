package connector

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"wasmstream.io/platform/abi"
)

// DefaultNATSPending is how many received messages a core NATS source
// subtask holds for Fetch before the NATS client drops new ones.
const DefaultNATSPending = 65536

// NATSSourceConfig configures one subtask of a core NATS source.
type NATSSourceConfig struct {
	// Subject may hold wildcards.
	Subject string
	// Queue is the queue group to subscribe in; "" subscribes alone, and
	// every subscriber gets every message.
	Queue string
	// Pending bounds the messages received and not yet fetched; past it
	// the client drops what arrives (Dropped counts them). Default
	// DefaultNATSPending.
	Pending int
}

// NATSSource is a core NATS subscription as a source: at most once. A
// message reaches it only while it is subscribed, nothing acknowledges
// it, and what it holds when the process ends is lost; a restored job goes
// on with the messages published after it subscribed again. Records have
// no key, the message's payload as value, the time the subtask received
// it as timestamp, and the message's headers.
//
// The NATS client delivers messages into a channel of Pending messages;
// when Fetch falls that far behind, the client drops new messages (a slow
// consumer) and counts them.
type NATSSource struct {
	subject string
	sub     *nats.Subscription
	ch      chan *nats.Msg
	timer   *time.Timer
	scratch recordScratch
	closed  bool
	// dropped is the client's count when the subscription ended.
	dropped atomic.Int64
}

// NewNATSSource subscribes to cfg.Subject on nc.
func NewNATSSource(nc *nats.Conn, cfg NATSSourceConfig) (*NATSSource, error) {
	if cfg.Subject == "" || strings.ContainsAny(cfg.Subject, " \t\r\n") {
		return nil, fmt.Errorf("connector: core NATS source: subject %q: want a subject without spaces", cfg.Subject)
	}
	if cfg.Pending <= 0 {
		cfg.Pending = DefaultNATSPending
	}
	s := &NATSSource{subject: cfg.Subject, ch: make(chan *nats.Msg, cfg.Pending), timer: time.NewTimer(time.Hour)}
	s.timer.Stop()
	var err error
	if cfg.Queue != "" {
		s.sub, err = nc.ChanQueueSubscribe(cfg.Subject, cfg.Queue, s.ch)
	} else {
		s.sub, err = nc.ChanSubscribe(cfg.Subject, s.ch)
	}
	if err != nil {
		return nil, fmt.Errorf("connector: core NATS source on %q: subscribe: %w", cfg.Subject, err)
	}
	// The subscription exists on the server once it answers a flush.
	if err := nc.Flush(); err != nil {
		_ = s.sub.Unsubscribe()
		return nil, fmt.Errorf("connector: core NATS source on %q: subscribe: %w", cfg.Subject, err)
	}
	return s, nil
}

// Fetch appends up to max records of the messages received.
func (s *NATSSource) Fetch(ctx context.Context, b *abi.Batch, max int, wait time.Duration) error {
	if s.closed {
		return ErrClosed
	}
	now := time.Now().UnixMilli()
	for n := 0; n < max; n++ {
		var m *nats.Msg
		select {
		case m = <-s.ch:
		default:
			if n > 0 || wait <= 0 {
				return nil
			}
			s.timer.Reset(wait)
			select {
			case m = <-s.ch:
				s.timer.Stop()
				now = time.Now().UnixMilli()
			case <-s.timer.C:
				return nil
			case <-ctx.Done():
				s.timer.Stop()
				return ctx.Err()
			}
		}
		s.scratch.append(b, m.Data, now, m.Header)
	}
	return nil
}

// Lag is the number of messages received and not yet fetched. It is safe
// to call from any goroutine.
func (s *NATSSource) Lag() int64 { return int64(len(s.ch)) }

// Dropped is the number of messages the client dropped because the source
// had Pending messages not yet fetched. It is safe to call from any
// goroutine.
func (s *NATSSource) Dropped() int64 {
	if n, err := s.sub.Dropped(); err == nil {
		return int64(n)
	}
	return s.dropped.Load()
}

// Close unsubscribes; the messages not yet fetched are dropped.
func (s *NATSSource) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if n, err := s.sub.Dropped(); err == nil {
		s.dropped.Store(int64(n))
	}
	s.timer.Stop()
	if err := s.sub.Unsubscribe(); err != nil && err != nats.ErrConnectionClosed {
		return fmt.Errorf("connector: core NATS source on %q: unsubscribe: %w", s.subject, err)
	}
	return nil
}

var _ Source = (*NATSSource)(nil)
