package connector

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// JetStreamSourceConfig configures one subtask of a JetStream source.
type JetStreamSourceConfig struct {
	Stream string
	// Subjects are the subject filters; empty reads the whole stream as
	// one filter named ">". Filters must not overlap.
	Subjects []string
	// Bounded ends the source at a fixed end per filter.
	Bounded bool
	// Subtask and Parallelism place this subtask: filter i is read by
	// subtask i % Parallelism.
	Subtask, Parallelism int
	// End, when non-nil, fixes the bounded end per filter (stream
	// sequence, inclusive) instead of computing it at start. It is kept
	// with the job so that a resumed job ends at the same place; see
	// BoundedEnd.
	End map[string]uint64
	// Start, when non-nil, resumes each filter it names after the given
	// stream sequence; filters it does not name start at the beginning.
	Start map[string]uint64
	// Name names the source in errors (its vertex id).
	Name string
	// OnGap is what a sequence gap does (see GapError): GapFail (the
	// default, also for "") fails the source, GapSkip goes on.
	OnGap string
	// Gap, when not nil, is called with each gap the source goes on past.
	Gap func(*GapError)
}

// JetStreamSource reads the subject filters of one subtask from a stream,
// each with an ordered consumer.
type JetStreamSource struct {
	stream  string
	name    string
	onGap   string
	gapFn   func(*GapError)
	bounded bool
	filters []*filterReader
	open    int // filters not yet at their bounded end
	queue   chan delivery
	done    chan struct{}
	wg      sync.WaitGroup
	js      jetstream.JetStream
	timer   *time.Timer
	err     error
	closed  bool
	scratch recordScratch
	// splits is the filter index of each record the last Fetch appended.
	splits []int32
	// kv, for a source of a KV bucket (NewKVSource), makes records of
	// the bucket's entries; nil for a stream's messages.
	kv *kvRecords
}

// filterReader is one subject filter of a source. Its fields other than it
// and index belong to the goroutine calling Fetch.
type filterReader struct {
	name  string
	index int
	cons  jetstream.Consumer
	it    jetstream.MessagesContext
	pos   uint64 // last stream sequence delivered
	end   uint64 // bounded end, inclusive
	done  bool
	// pending is what the server reported left for the consumer with the
	// last message delivered (or when the consumer was created); read by
	// Lag from any goroutine.
	pending atomic.Uint64
	gap     gapWatch
}

// delivery is a message, or the error that ended a filter's reader.
type delivery struct {
	filter int
	msg    jetstream.Msg
	err    error
}

const (
	// pullBatch bounds the messages each ordered consumer has requested
	// but not yet handed over, and pullBytes their bytes unless the
	// server's largest message is larger. Small messages read about a
	// fifth faster than with 1,024 (docs/PERFORMANCE.md).
	pullBatch = 4096
	pullBytes = 8 << 20
	// queueLen bounds the messages waiting for Fetch, for all filters of
	// a subtask together.
	queueLen = 1024
	// maxResetAttempts bounds how often an ordered consumer tries to
	// recreate itself in one recovery before the error reaches Fetch.
	maxResetAttempts = 5
	// closeTimeout bounds deleting the consumers on Close.
	closeTimeout = 5 * time.Second
)

// NewJetStreamSource opens the filters of cfg.Subtask. For a bounded source
// without cfg.End it fixes each filter's end at the last stream sequence
// matching it now; a filter with no messages, or resumed at or after its
// end, has nothing to read.
func NewJetStreamSource(ctx context.Context, js jetstream.JetStream, cfg JetStreamSourceConfig) (*JetStreamSource, error) {
	return newJetStreamSource(ctx, js, cfg, nil)
}

// newJetStreamSource is NewJetStreamSource, reading a KV bucket's entries
// when kv is set.
func newJetStreamSource(ctx context.Context, js jetstream.JetStream, cfg JetStreamSourceConfig, kv *kvRecords) (*JetStreamSource, error) {
	if err := checkSubtask(cfg.Subtask, cfg.Parallelism); err != nil {
		return nil, fmt.Errorf("connector: source on stream %q: %w", cfg.Stream, err)
	}
	if cfg.OnGap != "" && cfg.OnGap != GapFail && cfg.OnGap != GapSkip {
		return nil, fmt.Errorf("connector: source on stream %q: on_gap %q: want %s or %s", cfg.Stream, cfg.OnGap, GapFail, GapSkip)
	}
	names, err := filtersOf(cfg.Stream, cfg.Subjects)
	if err != nil {
		return nil, err
	}
	st, err := js.Stream(ctx, cfg.Stream)
	if err != nil {
		return nil, fmt.Errorf("connector: source on stream %q: %w", cfg.Stream, err)
	}
	s := &JetStreamSource{
		stream:  cfg.Stream,
		name:    cfg.Name,
		onGap:   cfg.OnGap,
		gapFn:   cfg.Gap,
		bounded: cfg.Bounded,
		queue:   make(chan delivery, queueLen),
		done:    make(chan struct{}),
		js:      js,
		timer:   time.NewTimer(time.Hour),
		kv:      kv,
	}
	s.timer.Stop()
	for _, name := range SubtaskFilters(names, cfg.Subtask, cfg.Parallelism) {
		f := &filterReader{name: name, index: len(s.filters), pos: cfg.Start[name]}
		s.filters = append(s.filters, f)
		if err := s.openFilter(ctx, st, f, cfg.End); err != nil {
			return nil, errors.Join(err, s.Close())
		}
	}
	return s, nil
}

func (s *JetStreamSource) openFilter(ctx context.Context, st jetstream.Stream, f *filterReader, ends map[string]uint64) error {
	if s.bounded {
		if ends != nil {
			end, ok := ends[f.name]
			if !ok {
				return fmt.Errorf("connector: source on stream %q: no bounded end for filter %q", s.stream, f.name)
			}
			f.end = end
		} else {
			end, err := lastSeq(ctx, st, f.name)
			if err != nil {
				return err
			}
			f.end = end
		}
		if f.pos >= f.end {
			f.done = true
			return nil
		}
		if s.kv != nil && f.pos > 0 {
			if err := s.kv.extendEnd(ctx, st, f); err != nil {
				return err
			}
		}
	}
	occ := jetstream.OrderedConsumerConfig{MaxResetAttempts: maxResetAttempts}
	if f.name != wholeStream {
		occ.FilterSubjects = []string{f.name}
	}
	switch {
	case s.kv != nil && f.pos == 0:
		// A bucket's current entries first: the last message of each
		// key, then every later one (kvsource.go).
		occ.DeliverPolicy = jetstream.DeliverLastPerSubjectPolicy
	case s.kv != nil:
		// Messages removed after the position were superseded by a
		// later one of their key, which is still to come: no gap.
		occ.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		occ.OptStartSeq = f.pos + 1
	case f.pos > 0:
		occ.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		occ.OptStartSeq = f.pos + 1
		if err := watchResume(ctx, st, f); err != nil {
			return fmt.Errorf("connector: source on stream %q filter %q: %w", s.stream, f.name, err)
		}
	}
	cons, err := st.OrderedConsumer(ctx, occ)
	if err != nil {
		return fmt.Errorf("connector: source on stream %q filter %q: %w", s.stream, f.name, err)
	}
	// A byte limit below the largest message would stall the consumer.
	limit := max(pullBytes, int(s.js.Conn().MaxPayload()))
	it, err := cons.Messages(jetstream.PullMaxMessagesWithBytesLimit(pullBatch, limit))
	if err != nil {
		return fmt.Errorf("connector: source on stream %q filter %q: %w", s.stream, f.name, err)
	}
	f.cons, f.it = cons, it
	f.pending.Store(cons.CachedInfo().NumPending)
	s.open++
	if s.bounded && cons.CachedInfo().NumPending == 0 {
		// Everything up to the end was removed before it could be read.
		s.finish(f)
		return nil
	}
	s.wg.Add(1)
	go s.read(f)
	return nil
}

// read moves one filter's messages into the queue until the filter's
// iterator stops or the source closes.
func (s *JetStreamSource) read(f *filterReader) {
	defer s.wg.Done()
	for {
		msg, err := f.it.Next()
		select {
		case s.queue <- delivery{filter: f.index, msg: msg, err: err}:
		case <-s.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// finish marks a filter as at its bounded end and stops its consumer.
func (s *JetStreamSource) finish(f *filterReader) {
	f.done = true
	f.pending.Store(0)
	s.open--
	f.it.Stop()
}

// End is the bounded end (stream sequence, inclusive) of each filter this
// subtask reads; nil for an unbounded source.
func (s *JetStreamSource) End() map[string]uint64 {
	if !s.bounded {
		return nil
	}
	m := make(map[string]uint64, len(s.filters))
	for _, f := range s.filters {
		m[f.name] = f.end
	}
	return m
}

// Lag is how many messages of the subtask's filters the stream holds that
// the source has not delivered yet: the sum of the pending counts JetStream
// reported with each filter's last delivered message (messages the client
// has received but not delivered are not in it). It is safe to call from any
// goroutine.
func (s *JetStreamSource) Lag() int64 {
	var n uint64
	for _, f := range s.filters {
		n += f.pending.Load()
	}
	return int64(n)
}

// Positions is the last stream sequence delivered for each filter this
// subtask reads (the Start position for a filter that delivered nothing).
// Restoring with these as Start resumes right after them.
func (s *JetStreamSource) Positions() map[string]uint64 {
	m := make(map[string]uint64, len(s.filters))
	for _, f := range s.filters {
		m[f.name] = f.pos
		if s.kv != nil && s.bounded {
			// A bounded KV source's end moves on a restore (NewKVSource).
			m[f.name+kvEndSuffix] = f.end
		}
	}
	return m
}

// Close stops the filters' consumers, waits for their goroutines and deletes
// the consumers from the server.
func (s *JetStreamSource) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	close(s.done)
	for _, f := range s.filters {
		if f.it != nil {
			f.it.Stop()
		}
	}
	s.wg.Wait()
	s.timer.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	var errs []error
	for _, f := range s.filters {
		if f.cons == nil {
			continue
		}
		info := f.cons.CachedInfo()
		if info == nil {
			continue
		}
		err := s.js.DeleteConsumer(ctx, s.stream, info.Name)
		if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			errs = append(errs, fmt.Errorf("connector: delete consumer %q of stream %q: %w", info.Name, s.stream, err))
		}
	}
	return errors.Join(errs...)
}
