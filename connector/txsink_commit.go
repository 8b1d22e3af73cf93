package connector

import (
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

// commitLoop is the committer goroutine: it publishes queued epochs one after
// the other, each message with its id, keeping at most maxInFlight
// unacknowledged, and marks an epoch committed once all its messages are
// acknowledged. After a failure it only counts epochs off: the subtask fails
// and recovery publishes them again.
func (s *TxSink) commitLoop(maxInFlight int) {
	defer close(s.done)
	ring := make([]jetstream.PubAckFuture, 0, maxInFlight)
	for {
		var job commitJob
		select {
		case job = <-s.queue:
		case <-s.runCtx.Done():
			return
		}
		err := s.err0()
		if err == nil {
			ring, err = s.publish(job, ring, maxInFlight)
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
// waits for all their acknowledgements.
func (s *TxSink) publish(job commitJob, ring []jetstream.PubAckFuture, maxInFlight int) ([]jetstream.PubAckFuture, error) {
	e := job.e
	id := make([]byte, 0, len(e.Prefix)+42)
	id = strconv.AppendInt(append(append(id, e.Prefix...), '.'), e.ID, 10)
	id = append(id, '.')
	base := len(id)
	head := 0
	await := func(fut jetstream.PubAckFuture) error {
		select {
		case <-fut.Ok():
			return nil
		case err := <-fut.Err():
			return s.failed(err)
		case <-s.runCtx.Done():
			return s.failed(s.runCtx.Err())
		}
	}
	err := e.each(func(index int64, r *abi.Record) error {
		if job.skip[index] {
			return nil
		}
		msg, err := sinkMessage(s.subject, r, 3)
		if err != nil {
			return err
		}
		id = strconv.AppendInt(id[:base], index, 10)
		msg.Header[nats.MsgIdHdr] = []string{string(id)}
		if len(ring)-head >= maxInFlight {
			// Waiting for half the window lets the next publishes go
			// out in a run.
			for len(ring)-head > maxInFlight/2 {
				if err := await(ring[head]); err != nil {
					return err
				}
				ring[head] = nil
				head++
			}
			ring = append(ring[:0], ring[head:]...)
			head = 0
		}
		fut, err := s.js.PublishMsgAsync(msg)
		if err != nil {
			return s.failed(err)
		}
		ring = append(ring, fut)
		return nil
	})
	for ; err == nil && head < len(ring); head++ {
		err = await(ring[head])
	}
	clear(ring)
	return ring[:0], err
}

func (s *TxSink) failed(err error) error {
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
