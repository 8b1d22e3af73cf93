package connector

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

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
	// MaxInFlight bounds unacknowledged publishes; default 4096. A fenced
	// sink that commits in atomic batches has one batch (at most 1,000
	// messages) in flight instead.
	MaxInFlight int
	// Budget bounds the staged bytes in memory (the open epoch and the
	// sealed ones not yet committed); past it the open epoch spills to a
	// file in SpillDir. Default DefaultTxBudget.
	Budget   int64
	SpillDir string
	// Fence, when set, is the subtask's fencing token (TakeFence, cluster
	// mode): every message is then stored only while the fence is still
	// the latest, and a commit after another owner took the fence fails
	// with ErrFenced. On a stream of one replica each message carries the
	// condition, and its id as HeaderID instead of Nats-Msg-Id; on a
	// replicated stream the commit goes out as JetStream atomic batches,
	// each carrying it once (fencedInBatches). Recover advances the fence
	// (changing it in place) and reads back what earlier commits stored.
	// Nil (one process, the embedded mode) publishes each message
	// unconditionally, with Nats-Msg-Id.
	Fence *Fence

	// inBatches makes a fenced sink commit in atomic batches whatever
	// the stream's replicas.
	inBatches bool
}

// TxSink is an exactly-once JetStream sink subtask: a two-phase commit over
// JetStream's de-duplication. Write stages records in the open epoch; Seal
// closes it at a checkpoint barrier; Commit hands the sealed epochs a
// completed checkpoint covers to the sink's committer, which publishes each
// message with the deterministic Nats-Msg-Id prefix.epoch.index while the
// subtask goes on; acknowledged epochs are dropped. A checkpoint keeps the
// sealed epochs not yet acknowledged (Snapshot), and Recover publishes them
// again after a failure: JetStream drops the ids it already has within the
// stream's duplicate window, and beyond it Recover reads back the ids stored
// since the commit started and skips them.
//
// A fenced sink (TxSinkConfig.Fence) publishes each message conditional
// on the fence when its stream has one replica, and otherwise each epoch
// as atomic batches of the indexes [1000k, 1000k+1000), one batch at a
// time, each conditional on the fence. Its Recover first advances the
// fence, so that nothing an earlier commit still has on its way can be
// stored after, then reads back every epoch's stored ids and sends the
// rest.
//
// Goroutines: the subtask's goroutine calls every method; the reader
// Snapshot returns may be read on another. The committer goroutine (started
// by NewTxSink, ended by Close) publishes queued epochs, which are sealed
// and so never change, through an ackPublisher (a batchPublisher when
// fenced in batches); mu guards what the two share (err, outstanding,
// changed and each Epoch's committed flag), and the batch counters are
// atomic.
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
	// committed counts the epochs acknowledged and dropped.
	committed int64
	closed    bool

	// fence is the sink's fence, nil when it has none.
	fence *Fence
	pub   *ackPublisher
	// batches publishes instead of pub when the sink is fenced in
	// batches.
	batches *batchPublisher
	stats   batchCounters
	// backoff is the wait before a batch's first resend.
	backoff time.Duration

	queue  chan commitJob
	stop   context.CancelFunc
	runCtx context.Context
	done   chan struct{}

	mu sync.Mutex
	// outstanding counts the epochs queued and not yet acknowledged;
	// changed is closed (and replaced) whenever it drops.
	outstanding int
	changed     chan struct{}
	err         error

	// kv, for a KV sink (NewKVTxSink), writes each record to its key's
	// subject, and only the last record of each key (txsink_kv.go).
	kv *kvTarget
	// staging holds the records Write stages for a KV sink.
	staging kvMessages

	// replay, after SkipCommitted or KeepSkipping, is the committed
	// output Write drops from a replay; kept is the buffer of what it
	// keeps, dropped the records it dropped (txsink_fallback.go).
	replay  *Replay
	kept    []abi.Record
	dropped int64
}

// commitJob is an epoch to publish, skipping the indexes found stored (and,
// compacted, those a later record of the same key supersedes).
type commitJob struct {
	e         *Epoch
	skip      map[int64]bool
	compacted bool
}

// NewTxSink checks that a stream captures cfg.Subject and returns the sink
// with its committer running.
func NewTxSink(ctx context.Context, js jetstream.JetStream, cfg TxSinkConfig) (*TxSink, error) {
	if cfg.Subject == "" || strings.ContainsAny(cfg.Subject, "*> \t\r\n") {
		return nil, fmt.Errorf("connector: sink subject %q: must be a literal subject", cfg.Subject)
	}
	return buildTxSink(ctx, js, cfg, nil)
}

// buildTxSink is NewTxSink, for the keys of a KV bucket when kv is set (and
// cfg.Subject the filter of all of them).
func buildTxSink(ctx context.Context, js jetstream.JetStream, cfg TxSinkConfig, kv *kvTarget) (*TxSink, error) {
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	if cfg.Budget <= 0 {
		cfg.Budget = DefaultTxBudget
	}
	var (
		stream string
		scfg   jetstream.StreamConfig
		err    error
	)
	if kv != nil {
		stream, scfg, err = kv.stream(ctx, js)
	} else {
		stream, scfg, err = sinkStream(ctx, js, cfg.Subject)
	}
	if err != nil {
		return nil, err
	}
	var (
		pub     *ackPublisher
		batches *batchPublisher
	)
	if cfg.Fence != nil {
		if err := fenceable(cfg.Subject, scfg, cfg.Fence); err != nil {
			return nil, err
		}
	}
	switch {
	case cfg.Fence == nil:
		pub, err = newAckPublisher(js.Conn(), cfg.Subject, true)
	case cfg.inBatches || fencedInBatches(scfg):
		batches, err = newBatchPublisher(js.Conn(), cfg.Subject, cfg.Fence)
	default:
		pub, err = newFencedPublisher(js.Conn(), cfg.Subject, cfg.Fence)
	}
	if err != nil {
		return nil, err
	}
	if kv != nil {
		kv.route(pub, batches)
	}
	runCtx, stop := context.WithCancel(context.Background())
	s := &TxSink{
		js: js, subject: cfg.Subject, stream: stream, window: scfg.Duplicates, prefix: cfg.Prefix,
		fence: cfg.Fence, pub: pub, batches: batches, backoff: batchBackoff,
		budget: cfg.Budget, dir: cfg.SpillDir, open: newEpoch(cfg.Prefix),
		queue: make(chan commitJob, 64), stop: stop, runCtx: runCtx, done: make(chan struct{}),
		changed: make(chan struct{}), kv: kv,
	}
	go s.commitLoop(cfg.MaxInFlight)
	return s, nil
}

// DuplicateWindow finds the stream that captures subject and its duplicate
// window.
func DuplicateWindow(ctx context.Context, js jetstream.JetStream, subject string) (stream string, window time.Duration, err error) {
	stream, cfg, err := sinkStream(ctx, js, subject)
	if err != nil {
		return "", 0, err
	}
	return stream, cfg.Duplicates, nil
}

// sinkStream finds the stream that captures subject and its configuration.
func sinkStream(ctx context.Context, js jetstream.JetStream, subject string) (string, jetstream.StreamConfig, error) {
	stream, err := js.StreamNameBySubject(ctx, subject)
	if err != nil {
		return "", jetstream.StreamConfig{}, fmt.Errorf("connector: sink to %q: no stream captures the subject: %w", subject, err)
	}
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return "", jetstream.StreamConfig{}, fmt.Errorf("connector: sink to %q: stream %q: %w", subject, stream, err)
	}
	return stream, st.CachedInfo().Config, nil
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
	if s.replay != nil {
		recs = s.dropReplayed(recs)
	}
	if s.kv != nil {
		var err error
		if recs, err = s.staging.of(recs); err != nil {
			return err
		}
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

// Snapshot returns the sealed epochs not yet acknowledged and the committed
// records a replay is still to produce again (Replay), in the format
// DecodeSinkState reads; the reader may be used on another goroutine, and
// release must be called after it.
func (s *TxSink) Snapshot() (r io.Reader, release func(), err error) {
	if err := s.poll(); err != nil {
		return nil, nil, err
	}
	for _, e := range s.pending {
		e.retain()
	}
	// The records a replay is still to produce again, copied now: the
	// reader may be read while Write goes on.
	var left []byte
	if s.replay != nil {
		left = s.replay.encode()
	}
	return encodeSinkState(append([]*Epoch(nil), s.pending...), left)
}

// Commit queues every sealed epoch of checkpoint upTo or before that is not
// queued yet; the committer publishes them. It waits only while the queue is
// full.
func (s *TxSink) Commit(ctx context.Context, upTo int64) error {
	if s.closed {
		return ErrClosed
	}
	for _, e := range s.pending {
		if e.ID > upTo || e.queued {
			continue
		}
		e.Since = time.Now()
		if err := s.enqueue(ctx, commitJob{e: e}); err != nil {
			return err
		}
	}
	return s.poll()
}

func (s *TxSink) enqueue(ctx context.Context, job commitJob) error {
	job.e.queued = true
	s.mu.Lock()
	s.outstanding++
	s.mu.Unlock()
	select {
	case s.queue <- job:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("connector: sink to %q: %w", s.subject, ctx.Err())
	}
}

// poll drops the epochs the committer has had acknowledged and returns the
// committer's error, if any.
func (s *TxSink) poll() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.pending[:0]
	for _, e := range s.pending {
		if !e.committed {
			kept = append(kept, e)
			continue
		}
		s.mem -= e.memBytes
		s.committed++
		e.release()
	}
	clear(s.pending[len(kept):])
	s.pending = kept
	return s.err
}

// Flush waits until every queued epoch is acknowledged and returns the
// first publish error.
func (s *TxSink) Flush(ctx context.Context) error {
	if s.closed {
		return ErrClosed
	}
	for {
		s.mu.Lock()
		n, changed, err := s.outstanding, s.changed, s.err
		s.mu.Unlock()
		if err != nil || n == 0 {
			return s.poll()
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("connector: sink to %q: %w", s.subject, ctx.Err())
		}
	}
}

// Pending is the number of sealed epochs not yet acknowledged.
func (s *TxSink) Pending() int { return len(s.pending) }

// Committed is the number of epochs acknowledged so far.
func (s *TxSink) Committed() int64 { return s.committed }

// Close stops the committer and drops everything staged; a sealed epoch
// survives in the checkpoints that hold it.
func (s *TxSink) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.stop()
	<-s.done
	s.open.release()
	for _, e := range s.pending {
		e.release()
	}
	s.pending = nil
	return nil
}
