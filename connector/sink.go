package connector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
	"wasmstream.io/platform/abi"
)

// Sink writes records.
type Sink interface {
	// Write publishes records asynchronously. It blocks while the sink's
	// bound of unacknowledged publishes is reached: that is backpressure,
	// never a drop.
	Write(ctx context.Context, recs []abi.Record) error
	// Flush waits until every written record is acknowledged and returns
	// the first publish error (failed ack, timeout, no stream for the
	// subject).
	Flush(ctx context.Context) error
	// Close releases the sink without waiting for acknowledgements.
	Close() error
}

// Headers the JetStream sink adds to every message.
const (
	HeaderKey       = "Platform-Key"
	HeaderTimestamp = "Platform-Timestamp"
)

// DefaultMaxInFlight is the default bound of unacknowledged publishes.
const DefaultMaxInFlight = 4096

// ErrBadHeader is returned by Write for a record whose key or headers a NATS
// header cannot carry: a CR or LF anywhere, or a name that is empty or has
// a colon, space or tab.
var ErrBadHeader = errors.New("connector: key or header not valid in a NATS header")

// JetStreamSinkConfig configures a JetStream sink.
type JetStreamSinkConfig struct {
	// Subject every record is published to; a stream must capture it.
	Subject string
	// MaxInFlight bounds unacknowledged publishes; default 4096. The
	// JetStream context's own async bound (Connect sets 65536) must cover
	// the sinks sharing it.
	MaxInFlight int
}

// JetStreamSink publishes records to one subject, each message carrying the
// sink's one reply subject, and counts the acknowledgements that arrive
// there (ackPublisher).
type JetStreamSink struct {
	subject     string
	pub         *ackPublisher
	maxInFlight int64
	err         error
	closed      bool
}

// NewJetStreamSink checks that a stream captures cfg.Subject and returns a
// sink publishing to it.
func NewJetStreamSink(ctx context.Context, js jetstream.JetStream, cfg JetStreamSinkConfig) (*JetStreamSink, error) {
	if cfg.Subject == "" || strings.ContainsAny(cfg.Subject, "*> \t\r\n") {
		return nil, fmt.Errorf("connector: sink subject %q: must be a literal subject", cfg.Subject)
	}
	if cfg.MaxInFlight < 0 {
		return nil, fmt.Errorf("connector: sink to %q: MaxInFlight %d is negative", cfg.Subject, cfg.MaxInFlight)
	}
	if cfg.MaxInFlight == 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	if _, err := js.StreamNameBySubject(ctx, cfg.Subject); err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil, fmt.Errorf("connector: sink to %q: no stream captures the subject: %w", cfg.Subject, err)
		}
		return nil, fmt.Errorf("connector: sink to %q: look up its stream: %w", cfg.Subject, err)
	}
	pub, err := newAckPublisher(js.Conn(), cfg.Subject, false)
	if err != nil {
		return nil, err
	}
	return &JetStreamSink{subject: cfg.Subject, pub: pub, maxInFlight: int64(cfg.MaxInFlight)}, nil
}

// Write publishes recs: the payload is the value, and the record's headers
// are sent with Platform-Key (the key) and Platform-Timestamp (decimal
// milliseconds) set, replacing headers of those names. When it fails, a
// prefix of recs may have been published.
func (s *JetStreamSink) Write(ctx context.Context, recs []abi.Record) error {
	if s.closed {
		return ErrClosed
	}
	if s.err != nil {
		return s.err
	}
	if err := s.pub.failure(); err != nil {
		return s.fail(err)
	}
	for i := range recs {
		r := &recs[i]
		if err := validRecord(s.subject, r); err != nil {
			return err
		}
		if s.pub.inFlight() >= s.maxInFlight {
			// Waiting for half the window, not one slot, lets the next
			// publishes go out in a run instead of one per acknowledgement.
			if err := s.await(ctx, s.maxInFlight/2); err != nil {
				return err
			}
		}
		if err := s.pub.publish(r, nil); err != nil {
			return s.fail(err)
		}
	}
	return nil
}

// await waits until at most n publishes are unacknowledged. A publish error
// is the sink's from then on; ctx ending is not.
func (s *JetStreamSink) await(ctx context.Context, n int64) error {
	err := s.pub.await(ctx, n)
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return fmt.Errorf("connector: sink to %q: %w", s.subject, err)
	}
	return s.fail(err)
}

// validRecord checks that a record's key and headers fit in NATS headers.
func validRecord(subject string, r *abi.Record) error {
	if bytes.ContainsAny(r.Key, "\r\n") {
		return fmt.Errorf("%w: key of a record for %q", ErrBadHeader, subject)
	}
	for _, hd := range r.Headers {
		if len(hd.Name) == 0 || bytes.ContainsAny(hd.Name, "\r\n: \t") || bytes.ContainsAny(hd.Value, "\r\n") {
			return fmt.Errorf("%w: header %q of a record for %q", ErrBadHeader, hd.Name, subject)
		}
	}
	return nil
}

// fail records the sink's first publish error and returns it.
func (s *JetStreamSink) fail(err error) error {
	if s.err == nil {
		s.err = fmt.Errorf("connector: publish to %q: %w", s.subject, err)
	}
	return s.err
}

// Flush waits for every outstanding publish and returns the sink's first
// publish error. An error is permanent: the sink fails every later call.
func (s *JetStreamSink) Flush(ctx context.Context) error {
	if s.closed {
		return ErrClosed
	}
	if s.err != nil {
		return s.err
	}
	return s.await(ctx, 0)
}

// InFlight is the number of publishes not yet acknowledged; 0 once closed.
func (s *JetStreamSink) InFlight() int {
	if s.closed {
		return 0
	}
	return int(s.pub.inFlight())
}

// Close drops the sink's outstanding publishes; call Flush first to wait
// for them.
func (s *JetStreamSink) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.pub.close()
	return nil
}

var _ Sink = (*JetStreamSink)(nil)
