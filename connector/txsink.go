package connector

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

// DefaultTxBudget is the staged bytes a transactional sink subtask keeps in
// memory before spilling to disk.
const DefaultTxBudget = 64 << 20

// TxSinkConfig configures one subtask of a transactional (exactly-once)
// JetStream sink.
type TxSinkConfig struct {
	// Subject every record is published to; a stream must capture it.
	Subject string
	// Prefix starts every Nats-Msg-Id: job, sink and subtask, e.g.
	// "job.sink.3"; the epoch and the record's index in it follow.
	Prefix string
	// MaxInFlight bounds unacknowledged publishes; default 4096.
	MaxInFlight int
	// Budget bounds the staged bytes in memory (the open epoch and the
	// sealed ones not yet committed); past it the open epoch spills to a
	// file in SpillDir. Default DefaultTxBudget.
	Budget   int64
	SpillDir string
}

// TxSink is an exactly-once JetStream sink subtask: a two-phase commit over
// JetStream's de-duplication. Write stages records in the open epoch; Seal
// closes it at a checkpoint barrier; Commit publishes the sealed epochs a
// completed checkpoint covers, each message with the deterministic
// Nats-Msg-Id prefix.epoch.index; acknowledged epochs are dropped. A
// checkpoint keeps the sealed epochs not yet acknowledged (Snapshot), and
// Recover publishes them again after a failure: JetStream drops the ids it
// already has within the stream's duplicate window, and beyond it Recover
// reads back the ids stored since the commit started and skips them.
//
// A TxSink belongs to its subtask's goroutine, except that the reader
// Snapshot returns may be read on another.
type TxSink struct {
	js      jetstream.JetStream
	subject string
	stream  string
	window  time.Duration
	prefix  string
	budget  int64
	dir     string

	open    *Epoch
	pending []*Epoch
	// mem is the staged bytes held in memory by open and pending.
	mem int64
	// inflight is a ring of unacknowledged publishes, oldest at head.
	inflight []txPublish
	head, n  int
	err      error
	closed   bool
	// committed counts the epochs acknowledged.
	committed int64
}

type txPublish struct {
	fut   jetstream.PubAckFuture
	epoch *Epoch
	last  bool
}

// NewTxSink checks that a stream captures cfg.Subject and returns the sink.
func NewTxSink(ctx context.Context, js jetstream.JetStream, cfg TxSinkConfig) (*TxSink, error) {
	if cfg.Subject == "" || strings.ContainsAny(cfg.Subject, "*> \t\r\n") {
		return nil, fmt.Errorf("connector: sink subject %q: must be a literal subject", cfg.Subject)
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	if cfg.Budget <= 0 {
		cfg.Budget = DefaultTxBudget
	}
	stream, window, err := DuplicateWindow(ctx, js, cfg.Subject)
	if err != nil {
		return nil, err
	}
	return &TxSink{
		js: js, subject: cfg.Subject, stream: stream, window: window, prefix: cfg.Prefix,
		budget: cfg.Budget, dir: cfg.SpillDir, open: newEpoch(cfg.Prefix),
		inflight: make([]txPublish, cfg.MaxInFlight),
	}, nil
}

// DuplicateWindow finds the stream that captures subject and its duplicate
// window.
func DuplicateWindow(ctx context.Context, js jetstream.JetStream, subject string) (stream string, window time.Duration, err error) {
	stream, err = js.StreamNameBySubject(ctx, subject)
	if err != nil {
		return "", 0, fmt.Errorf("connector: sink to %q: no stream captures the subject: %w", subject, err)
	}
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return "", 0, fmt.Errorf("connector: sink to %q: stream %q: %w", subject, stream, err)
	}
	return stream, st.CachedInfo().Config.Duplicates, nil
}

// Write stages records in the open epoch. Past the memory budget the open
// epoch spills to disk; nothing is dropped.
func (s *TxSink) Write(_ context.Context, recs []abi.Record) error {
	if s.closed {
		return ErrClosed
	}
	if err := s.poll(); err != nil {
		return err
	}
	for i := range recs {
		if err := validRecord(s.subject, &recs[i]); err != nil {
			return err
		}
		s.mem += s.open.stage(&recs[i])
	}
	if s.mem > s.budget {
		freed, err := s.open.spillTo(s.dir)
		if err != nil {
			return err
		}
		s.mem -= freed
	}
	return nil
}

// validRecord checks that a record can become a message before it is staged,
// so that a commit never fails on it.
func validRecord(subject string, r *abi.Record) error {
	_, err := sinkMessage(subject, r, 0)
	return err
}

// Seal closes the open epoch as checkpoint id's; an empty epoch is dropped.
func (s *TxSink) Seal(id int64) error {
	e := s.open
	s.open = newEpoch(s.prefix)
	if e.Count == 0 {
		e.release()
		return nil
	}
	if err := e.seal(id); err != nil {
		return err
	}
	s.pending = append(s.pending, e)
	return nil
}

// Staged is the number of records in the open epoch.
func (s *TxSink) Staged() int64 { return s.open.Count }

// Snapshot returns the sealed epochs not yet acknowledged, in the format
// DecodeEpochs reads; the reader may be used on another goroutine, and
// release must be called after it.
func (s *TxSink) Snapshot() (r io.Reader, release func(), err error) {
	if err := s.poll(); err != nil {
		return nil, nil, err
	}
	for _, e := range s.pending {
		e.retain()
	}
	return EncodeEpochs(append([]*Epoch(nil), s.pending...))
}

// Commit publishes every sealed epoch of checkpoint upTo or before that is
// not being committed yet. It waits only when MaxInFlight publishes are
// unacknowledged.
func (s *TxSink) Commit(ctx context.Context, upTo int64) error {
	if s.closed {
		return ErrClosed
	}
	for _, e := range s.pending {
		if e.ID > upTo || !e.Since.IsZero() {
			continue
		}
		e.Since = time.Now()
		if err := s.publishEpoch(ctx, e, nil); err != nil {
			return err
		}
	}
	return s.err
}

// publishEpoch publishes e's records, skipping the indexes in skip.
func (s *TxSink) publishEpoch(ctx context.Context, e *Epoch, skip map[int64]bool) error {
	id := make([]byte, 0, len(e.Prefix)+42)
	id = strconv.AppendInt(append(append(id, e.Prefix...), '.'), e.ID, 10)
	id = append(id, '.')
	base := len(id)
	published := false
	err := e.each(func(index int64, r *abi.Record) error {
		if skip[index] {
			return nil
		}
		msg, err := sinkMessage(s.subject, r, 3)
		if err != nil {
			return err
		}
		id = strconv.AppendInt(id[:base], index, 10)
		msg.Header[nats.MsgIdHdr] = []string{string(id)}
		if err := s.reserve(ctx); err != nil {
			return err
		}
		fut, err := s.js.PublishMsgAsync(msg)
		if err != nil {
			return s.fail(err)
		}
		s.inflight[(s.head+s.n)%len(s.inflight)] = txPublish{fut: fut, epoch: e, last: index == e.Count-1}
		s.n++
		published = true
		return nil
	})
	if err != nil {
		return err
	}
	if !published || skip[e.Count-1] {
		// The last record's acknowledgement is what retires an epoch;
		// without one in flight, a marker does it.
		s.inflight[(s.head+s.n)%len(s.inflight)] = txPublish{epoch: e, last: true}
		if err := s.reserve(ctx); err != nil {
			return err
		}
		s.n++
	}
	return nil
}

// reserve waits until a publish may be added to the ring.
func (s *TxSink) reserve(ctx context.Context) error {
	for s.n >= len(s.inflight)-1 {
		if err := s.awaitOldest(ctx); err != nil {
			return err
		}
	}
	return s.err
}

// poll retires the acknowledged publishes at the head of the ring without
// waiting.
func (s *TxSink) poll() error {
	for s.n > 0 {
		p := s.inflight[s.head]
		if p.fut != nil {
			select {
			case <-p.fut.Ok():
			case err := <-p.fut.Err():
				s.fail(err)
			default:
				return s.err
			}
		}
		s.retire()
	}
	return s.err
}

func (s *TxSink) awaitOldest(ctx context.Context) error {
	p := s.inflight[s.head]
	if p.fut != nil {
		select {
		case <-p.fut.Ok():
		case err := <-p.fut.Err():
			s.fail(err)
		case <-ctx.Done():
			return fmt.Errorf("connector: sink to %q: %w", s.subject, ctx.Err())
		}
	}
	s.retire()
	return nil
}

// retire drops the head of the ring; the last publish of an epoch drops
// the epoch.
func (s *TxSink) retire() {
	p := s.inflight[s.head]
	s.inflight[s.head] = txPublish{}
	s.head = (s.head + 1) % len(s.inflight)
	s.n--
	if !p.last || s.err != nil {
		return
	}
	for i, e := range s.pending {
		if e == p.epoch {
			s.mem -= e.memBytes
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			s.committed++
			e.release()
			return
		}
	}
}

func (s *TxSink) fail(err error) error {
	if s.err == nil {
		s.err = fmt.Errorf("connector: publish to %q: %w", s.subject, err)
	}
	return s.err
}

// Flush waits until every publish is acknowledged and returns the first
// publish error.
func (s *TxSink) Flush(ctx context.Context) error {
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

// Pending is the number of sealed epochs not yet acknowledged.
func (s *TxSink) Pending() int { return len(s.pending) }

// Committed is the number of epochs acknowledged so far.
func (s *TxSink) Committed() int64 { return s.committed }

// Close drops everything staged; a sealed epoch survives in the
// checkpoints that hold it.
func (s *TxSink) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	clear(s.inflight)
	s.n = 0
	s.open.release()
	for _, e := range s.pending {
		e.release()
	}
	s.pending = nil
	return nil
}
