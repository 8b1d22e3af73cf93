package connector

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// clockMargin is how much earlier than recorded a commit is taken to have
// started, and how much of the duplicate window is not relied on.
const clockMargin = 2 * time.Second

// RecoverStats say what Recover did.
type RecoverStats struct {
	Epochs int
	// Published messages were sent again (JetStream drops those it already
	// has within its duplicate window); Skipped were found stored by
	// reading the stream back, or, for a KV sink, superseded by a later
	// write of their key, and not sent.
	Published, Skipped int64
	// ReadBack: the stream was read back, because the sink is fenced or
	// some epoch's commit may have started longer ago than the duplicate
	// window.
	ReadBack bool
}

// Recover commits epochs restored from a completed checkpoint (sealed
// epochs it kept) and waits until they are acknowledged; it must be called
// before the sink's first Commit. restored is when that checkpoint was
// triggered: no commit of an epoch that has no Since began before it. An
// epoch whose commit may have begun longer ago than the stream's duplicate
// window (less a margin) is read back: the ids stored since its commit
// began are read from the stream and not published again.
//
// A fenced sink first advances its fence (advanceFence), so that no
// message of an earlier commit under the same fence can be stored after,
// and then reads every epoch back: its messages on one replica carry no
// Nats-Msg-Id for JetStream to drop (HeaderID), and in batches a batch
// holding one stored id would be refused whole.
func (s *TxSink) Recover(ctx context.Context, epochs []*Epoch, restored time.Time) (RecoverStats, error) {
	st := RecoverStats{Epochs: len(epochs)}
	if s.fence != nil && len(epochs) > 0 {
		if err := s.advanceFence(ctx); err != nil {
			return st, err
		}
	}
	var (
		checked  = map[string]map[int64]bool{}
		earliest time.Time
	)
	for _, e := range epochs {
		since := e.Since
		if since.IsZero() {
			since = restored
		}
		since = since.Add(-clockMargin)
		if s.fence == nil && time.Since(since) < s.window-clockMargin {
			continue
		}
		checked[epochPrefix(e)] = map[int64]bool{}
		if earliest.IsZero() || since.Before(earliest) {
			earliest = since
		}
	}
	if len(checked) > 0 {
		st.ReadBack = true
		if err := s.readBack(ctx, earliest, checked); err != nil {
			return st, err
		}
	}
	var superseded []map[int64]bool
	if s.kv != nil {
		// A KV sink writes the last record of each key of all the
		// epochs only (NewKVTxSink).
		var err error
		if superseded, err = supersededKeys(epochs); err != nil {
			return st, err
		}
	}
	for k, e := range epochs {
		job := commitJob{e: e, skip: checked[epochPrefix(e)]}
		if superseded != nil {
			job.skip, job.compacted = mergeSkips(job.skip, superseded[k]), true
		}
		st.Skipped += int64(len(job.skip))
		st.Published += e.Count - int64(len(job.skip))
		e.Since = time.Now()
		s.pending = append(s.pending, e)
		s.mem += e.memBytes
		if err := s.enqueue(ctx, job); err != nil {
			return st, err
		}
	}
	return st, s.Flush(ctx)
}

// epochPrefix is what every message id of e starts with.
func epochPrefix(e *Epoch) string {
	return e.Prefix + "." + strconv.FormatInt(e.ID, 10) + "."
}

// readBack reads the message ids stored on the sink's subject since since
// and records, for each epoch prefix in checked, the indexes found.
func (s *TxSink) readBack(ctx context.Context, since time.Time, checked map[string]map[int64]bool) error {
	return s.scan(ctx, since, true, func(msg jetstream.Msg) error {
		noteStored(storedID(msg.Headers()), checked)
		return nil
	})
}

// scan reads the messages stored on the sink's subject from since to the
// subject's last message when it began (only their headers when
// headersOnly), calling each for every one, and stops at each's first
// error.
func (s *TxSink) scan(ctx context.Context, since time.Time, headersOnly bool, each func(jetstream.Msg) error) error {
	st, err := s.js.Stream(ctx, s.stream)
	if err != nil {
		return fmt.Errorf("connector: sink to %q: read back stream %q: %w", s.subject, s.stream, err)
	}
	last, err := st.GetLastMsgForSubject(ctx, s.subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("connector: sink to %q: read back stream %q: %w", s.subject, s.stream, err)
	}
	if last.Time.Before(since) {
		// Nothing stored since: a consumer starting then would never
		// deliver the last message to end the read on.
		return nil
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{s.subject}, DeliverPolicy: jetstream.DeliverByStartTimePolicy,
		OptStartTime: &since, HeadersOnly: headersOnly,
	})
	if err != nil {
		return fmt.Errorf("connector: sink to %q: read back stream %q: %w", s.subject, s.stream, err)
	}
	defer func() {
		if info := cons.CachedInfo(); info != nil {
			_ = s.js.DeleteConsumer(context.WithoutCancel(ctx), s.stream, info.Name)
		}
	}()
	// The read ends at the subject's last message when it began. A fetch
	// that brings nothing before it is tried again: on a NATS cluster the
	// consumer's interest can reach the node after the fetch does (no
	// responders). Thirty seconds without progress fail the read.
	progress := time.Now()
	for {
		batch, err := cons.Fetch(pullBatch, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return fmt.Errorf("connector: sink to %q: read back stream %q: %w", s.subject, s.stream, err)
		}
		n := 0
		done := false
		for msg := range batch.Messages() {
			n++
			if err := each(msg); err != nil {
				return err
			}
			if meta, err := msg.Metadata(); err == nil && meta.Sequence.Stream >= last.Sequence {
				done = true
			}
		}
		err = batch.Error()
		if err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, nats.ErrNoResponders) {
			return fmt.Errorf("connector: sink to %q: read back stream %q: %w", s.subject, s.stream, err)
		}
		if done {
			return nil
		}
		if n > 0 {
			progress = time.Now()
		} else if time.Since(progress) > readBackStall {
			return fmt.Errorf("connector: sink to %q: read back stream %q: no progress for %s before sequence %d: %v",
				s.subject, s.stream, readBackStall, last.Sequence, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// readBackStall is how long a read-back may bring nothing before it fails.
const readBackStall = 30 * time.Second

// storedID is the id a sink stored its message with: HeaderID (a fenced
// sink's, on one replica) or Nats-Msg-Id.
func storedID(h nats.Header) string {
	if id := h.Get(HeaderID); id != "" {
		return id
	}
	return h.Get(nats.MsgIdHdr)
}

// advanceFence advances the sink's fence and makes its messages expect the
// new one.
func (s *TxSink) advanceFence(ctx context.Context) error {
	if err := advanceFence(ctx, s.js, s.stream, s.fence); err != nil {
		return fmt.Errorf("connector: sink to %q: recover: %w", s.subject, err)
	}
	if s.batches != nil {
		s.batches.hdr.fenceAt(s.fence.Seq)
	} else {
		s.pub.hdr.fenceAt(s.fence.Seq)
	}
	return nil
}

// noteStored records a stored message id if it belongs to an epoch in
// checked.
func noteStored(id string, checked map[string]map[int64]bool) {
	dot := strings.LastIndexByte(id, '.')
	if dot < 0 {
		return
	}
	skip, ok := checked[id[:dot+1]]
	if !ok {
		return
	}
	if index, err := strconv.ParseInt(id[dot+1:], 10, 64); err == nil {
		skip[index] = true
	}
}
