package connector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
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

// JetStreamSink publishes records to one subject with async publishes.
type JetStreamSink struct {
	js      jetstream.JetStream
	subject string
	// pending is a ring of unacknowledged publishes, oldest at head.
	pending []jetstream.PubAckFuture
	head, n int
	err     error
	closed  bool
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
	return &JetStreamSink{
		js:      js,
		subject: cfg.Subject,
		pending: make([]jetstream.PubAckFuture, cfg.MaxInFlight),
	}, nil
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
	for i := range recs {
		if s.n == len(s.pending) {
			// Waiting for half the window, not one slot, lets the next
			// publishes go out in a run instead of one per acknowledgement.
			for s.n > len(s.pending)/2 {
				if err := s.awaitOldest(ctx); err != nil {
					return err
				}
			}
			if s.err != nil {
				return s.err
			}
		}
		msg, err := s.message(&recs[i])
		if err != nil {
			return err
		}
		fut, err := s.js.PublishMsgAsync(msg)
		if err != nil {
			return s.fail(err)
		}
		s.pending[(s.head+s.n)%len(s.pending)] = fut
		s.n++
	}
	return nil
}

func (s *JetStreamSink) message(r *abi.Record) (*nats.Msg, error) {
	return sinkMessage(s.subject, r, 2)
}

// sinkMessage builds the message of a record for subject, with room for
// extra headers besides the record's own and the two the sink adds.
func sinkMessage(subject string, r *abi.Record, extra int) (*nats.Msg, error) {
	if err := validRecord(subject, r); err != nil {
		return nil, err
	}
	h := make(nats.Header, len(r.Headers)+extra)
	for _, hd := range r.Headers {
		name := string(hd.Name)
		h[name] = append(h[name], string(hd.Value))
	}
	// One string holds the key and the timestamp, one slice both values.
	var buf [64]byte
	kt := string(strconv.AppendInt(append(buf[:0], r.Key...), r.Timestamp, 10))
	vals := []string{kt[:len(r.Key)], kt[len(r.Key):]}
	h[HeaderKey] = vals[0:1:1]
	h[HeaderTimestamp] = vals[1:2:2]
	// The value is copied: the client keeps the message for retries after
	// Write returns, when the caller may reuse the record's memory.
	return &nats.Msg{Subject: subject, Data: bytes.Clone(r.Value), Header: h}, nil
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

// awaitOldest waits for the oldest unacknowledged publish, recording its
// error; it fails only when ctx ends first.
func (s *JetStreamSink) awaitOldest(ctx context.Context) error {
	fut := s.pending[s.head]
	select {
	case <-fut.Ok():
	case err := <-fut.Err():
		s.fail(err)
	case <-ctx.Done():
		return fmt.Errorf("connector: sink to %q: %w", s.subject, ctx.Err())
	}
	s.pending[s.head] = nil
	s.head = (s.head + 1) % len(s.pending)
	s.n--
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
	for s.n > 0 {
		if err := s.awaitOldest(ctx); err != nil {
			return err
		}
	}
	return s.err
}

// InFlight is the number of publishes not yet acknowledged.
func (s *JetStreamSink) InFlight() int { return s.n }

// Close drops the sink's outstanding publishes; call Flush first to wait
// for them.
func (s *JetStreamSink) Close() error {
	s.closed = true
	clear(s.pending)
	s.n = 0
	return nil
}

var _ Sink = (*JetStreamSink)(nil)
