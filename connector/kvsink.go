package connector

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

// ErrBadKVRecord is a record a KV sink cannot write: its key is not a valid
// KV key, or its Platform-Op header is neither put nor delete.
var ErrBadKVRecord = errors.New("record not writable to a KV bucket")

// CheckKVRecord says why a KV sink cannot write r, with an error wrapping
// ErrBadKVRecord, or returns nil.
func CheckKVRecord(r *abi.Record) error {
	if !ValidKVKey(r.Key) {
		return fmt.Errorf("%w: key %q is not a KV key (letters, digits, '-', '/', '_', '=' and '.' between tokens)", ErrBadKVRecord, r.Key)
	}
	if _, err := kvOp(r); err != nil {
		return err
	}
	return nil
}

// kvOp reads the Platform-Op header of r: delete, or put (also without it).
func kvOp(r *abi.Record) (del bool, err error) {
	for _, h := range r.Headers {
		if string(h.Name) != HeaderOp {
			continue
		}
		switch string(h.Value) {
		case OpPut:
			del = false
		case OpDelete:
			del = true
		default:
			return false, fmt.Errorf("%w: header %s %q: want %s or %s", ErrBadKVRecord, HeaderOp, h.Value, OpPut, OpDelete)
		}
	}
	return del, nil
}

// kvDelete is the header of the message that deletes a key.
var kvDelete = []abi.Header{{Name: []byte(kvOperation), Value: []byte(kvDel)}}

// kvMessages turns records into the records of their KV messages: a put
// keeps the key, value and timestamp and drops the headers; a delete has
// no value and the header KV-Operation DEL. Its slice is reused by each
// call.
type kvMessages struct {
	out []abi.Record
}

// of returns the records of recs' messages, valid until the next call, or
// the error of the first record a KV sink cannot write.
func (m *kvMessages) of(recs []abi.Record) ([]abi.Record, error) {
	m.out = m.out[:0]
	for i := range recs {
		r := &recs[i]
		if err := CheckKVRecord(r); err != nil {
			return nil, err
		}
		del, _ := kvOp(r)
		msg := abi.Record{Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}
		if del {
			msg.Value, msg.Headers = nil, kvDelete
		}
		m.out = append(m.out, msg)
	}
	return m.out, nil
}

// KVSinkConfig configures a KV sink that writes at once (at least once).
type KVSinkConfig struct {
	Bucket string
	// MaxInFlight bounds unacknowledged writes; default 4096.
	MaxInFlight int
}

// KVSink writes each record to a KV bucket as it comes: the record's value
// under its key, or, for a record with the header Platform-Op delete, a
// delete of the key. Writes are JetStream publishes to the key's subject,
// counted as a JetStreamSink counts its acknowledgements; the messages carry
// Platform-Key and Platform-Timestamp, which KV readers ignore. After a
// failure replayed records write their keys again: the bucket ends with the
// same values once the replay has caught up.
type KVSink struct {
	js  *JetStreamSink
	msg kvMessages
}

// NewKVSink checks that the bucket exists and returns a sink writing to it.
func NewKVSink(ctx context.Context, js jetstream.JetStream, cfg KVSinkConfig) (*KVSink, error) {
	if cfg.MaxInFlight < 0 {
		return nil, fmt.Errorf("connector: KV sink to bucket %q: MaxInFlight %d is negative", cfg.Bucket, cfg.MaxInFlight)
	}
	if cfg.MaxInFlight == 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	t := &kvTarget{bucket: cfg.Bucket}
	if _, _, err := t.stream(ctx, js); err != nil {
		return nil, err
	}
	subject := KVFilter(cfg.Bucket, "")
	pub, err := newAckPublisher(js.Conn(), subject, false)
	if err != nil {
		return nil, err
	}
	t.route(pub, nil)
	return &KVSink{js: &JetStreamSink{subject: subject, pub: pub, maxInFlight: int64(cfg.MaxInFlight)}}, nil
}

// Write writes recs. A record CheckKVRecord refuses fails the call, with the
// records before it written.
func (s *KVSink) Write(ctx context.Context, recs []abi.Record) error {
	for i := range recs {
		if err := CheckKVRecord(&recs[i]); err != nil {
			if werr := s.write(ctx, recs[:i]); werr != nil {
				return werr
			}
			return err
		}
	}
	return s.write(ctx, recs)
}

func (s *KVSink) write(ctx context.Context, recs []abi.Record) error {
	msgs, err := s.msg.of(recs)
	if err != nil || len(msgs) == 0 {
		return err
	}
	return s.js.Write(ctx, msgs)
}

// Flush waits until every write is acknowledged and returns the first
// error.
func (s *KVSink) Flush(ctx context.Context) error { return s.js.Flush(ctx) }

// InFlight is the number of writes not yet acknowledged.
func (s *KVSink) InFlight() int { return s.js.InFlight() }

// Close drops the outstanding writes; call Flush first to wait for them.
func (s *KVSink) Close() error { return s.js.Close() }

var _ Sink = (*KVSink)(nil)
