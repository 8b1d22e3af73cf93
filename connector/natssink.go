package connector

import (
	"context"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"

	"wasmstream.io/platform/abi"
)

// NATSSink publishes records to a core NATS subject: at most once. Each
// message's payload is the record's value, with the record's headers and
// Platform-Key and Platform-Timestamp, as a JetStream sink's. Nothing
// acknowledges a message: it reaches the subscribers connected when it
// arrives, and a replay after a failure publishes its records again.
type NATSSink struct {
	nc      *nats.Conn
	subject string
	msg     nats.Msg
	hdr     recordHeaders
	closed  bool
}

// NewNATSSink returns a sink publishing to subject on nc.
func NewNATSSink(nc *nats.Conn, subject string) (*NATSSink, error) {
	if subject == "" || strings.ContainsAny(subject, "*> \t\r\n") {
		return nil, fmt.Errorf("connector: core NATS sink subject %q: must be a literal subject", subject)
	}
	s := &NATSSink{nc: nc, subject: subject, msg: nats.Msg{Subject: subject}}
	s.hdr.init(false, false)
	return s, nil
}

// Write publishes recs. The client buffers them and sends them in the
// background; a full buffer makes Write wait for it.
func (s *NATSSink) Write(_ context.Context, recs []abi.Record) error {
	if s.closed {
		return ErrClosed
	}
	for i := range recs {
		r := &recs[i]
		if err := validRecord(s.subject, r); err != nil {
			return err
		}
		s.msg.Header = s.hdr.header(r, nil)
		s.msg.Data = r.Value
		err := s.nc.PublishMsg(&s.msg)
		s.msg.Data = nil
		s.hdr.reset()
		if err != nil {
			return fmt.Errorf("connector: publish to %q: %w", s.subject, err)
		}
	}
	return nil
}

// Flush waits until the server has received everything written.
func (s *NATSSink) Flush(ctx context.Context) error {
	if s.closed {
		return ErrClosed
	}
	if err := s.nc.FlushWithContext(ctx); err != nil {
		return fmt.Errorf("connector: publish to %q: flush: %w", s.subject, err)
	}
	return nil
}

// Close releases the sink; what the client has buffered is still sent.
func (s *NATSSink) Close() error {
	s.closed = true
	return nil
}

var _ Sink = (*NATSSink)(nil)
