package connector

import (
	"context"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

// commitLoop is the committer goroutine: it publishes queued epochs one after
// the other, each message with its id (and its condition on the fence, when
// the sink has one), keeping at most maxInFlight unacknowledged (a sink
// fenced in batches: in atomic batches, publishFenced), and marks an epoch
// committed once all its messages are acknowledged. After a failure it only
// counts epochs off: the subtask fails and recovery publishes them again.
func (s *TxSink) commitLoop(maxInFlight int) {
	defer close(s.done)
	if s.batches != nil {
		defer s.batches.close()
	} else {
		defer s.pub.close()
	}
	for {
		var job commitJob
		select {
		case job = <-s.queue:
		case <-s.runCtx.Done():
			return
		}
		err := s.err0()
		if err == nil {
			err = s.compact(&job) // txsink_kv.go
		}
		switch {
		case err != nil:
		case s.batches != nil:
			err = s.publishFenced(job)
		default:
			err = s.publish(job, int64(maxInFlight))
		}
		s.mu.Lock()
		if err != nil && s.err == nil {
			s.err = err
		}
		if s.err == nil {
			job.e.committed = true
		}
		s.outstanding--
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
	}
}

func (s *TxSink) err0() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// publish sends one epoch's records, skipping the indexes in job.skip, and
// waits for all their acknowledgements. Until the stream has stored one of
// them anew (not as a duplicate of what an earlier try stored), it sends
// one at a time: a stream that refuses writes, and would take them again a
// moment later, then refuses one message, not a window of them some of
// which it might store after the refused ones. After a failure it waits for
// every message still in flight, so that none lands after what a recovery
// sends. Either way a key's records reach the stream in their order.
func (s *TxSink) publish(job commitJob, maxInFlight int64) error {
	e := job.e
	id := idPrefix(e)
	base := len(id)
	unacked := int64(0)
	probing := true
	var pubErr error
	err := e.each(func(index int64, r *abi.Record) error {
		if job.skip[index] {
			return nil
		}
		if unacked >= maxInFlight {
			// Waiting for half the window lets the next publishes go
			// out in a run.
			if pubErr = s.pub.await(s.runCtx, maxInFlight/2); pubErr != nil {
				return pubErr
			}
			unacked = maxInFlight / 2
		}
		id = strconv.AppendInt(id[:base], index, 10)
		dups := s.pub.dups.Load()
		if pubErr = s.pub.publish(r, id); pubErr != nil {
			return pubErr
		}
		unacked++
		if probing {
			if pubErr = s.pub.await(s.runCtx, 0); pubErr != nil {
				return pubErr
			}
			probing = s.pub.dups.Load() > dups
			unacked = 0
		}
		return nil
	})
	if err == nil {
		err = s.pub.await(s.runCtx, 0)
		pubErr = err
	}
	if pubErr != nil {
		// Also when the run was cancelled (another subtask failed): a
		// stream that refused writes may take those still in flight once
		// this subtask is gone, after what a recovery sent before them.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(s.runCtx), publishAckTimeout)
		s.pub.drain(ctx)
		cancel()
		return s.failed(pubErr)
	}
	return err
}

// idPrefix is what every message id of e starts with, prefix.epoch., in a
// buffer with room for the index.
func idPrefix(e *Epoch) []byte {
	id := make([]byte, 0, len(e.Prefix)+42)
	id = strconv.AppendInt(append(append(id, e.Prefix...), '.'), e.ID, 10)
	return append(id, '.')
}

// failed is err, a commit's failed publish, naming the sink's subject:
// ErrFenced when JetStream refused it because the sink's fence is no
// longer the last message on its subject.
func (s *TxSink) failed(err error) error {
	if s.fence != nil && hasCode(err, jetstream.JSErrCodeStreamWrongLastSequence) {
		return fmt.Errorf("connector: publish to %q: %w: fence %s: %w", s.subject, ErrFenced, s.fence, err)
	}
	return &publishError{subject: s.subject, err: err}
}

// publishError is a failed publish of a commit.
type publishError struct {
	subject string
	err     error
}

func (e *publishError) Error() string {
	return "connector: publish to " + strconv.Quote(e.subject) + ": " + e.err.Error()
}
func (e *publishError) Unwrap() error { return e.err }
