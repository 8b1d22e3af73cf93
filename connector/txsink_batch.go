package connector

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

// batchMax is the most messages of one atomic batch (the server's default
// limit) and the number of an epoch's indexes each batch covers.
const batchMax = 1000

// How often a fenced sink sends a batch again after a refusal that passes,
// and how long it waits before the first resend (doubling, at most
// batchBackoffMax).
const (
	batchRetries    = 8
	batchBackoff    = 50 * time.Millisecond
	batchBackoffMax = 2 * time.Second
)

// Error codes of JetStream's atomic batch publish that the nats.go client
// does not name.
const (
	jsErrCodeDuplicateInProcess   jetstream.ErrorCode = 10158
	jsErrCodeBatchIncomplete      jetstream.ErrorCode = 10176
	jsErrCodeBatchHasDuplicate    jetstream.ErrorCode = 10201
	jsErrCodeBatchTooManyInflight jetstream.ErrorCode = 10210
)

// BatchStats count what a fenced sink's committer did with its atomic
// batches.
type BatchStats struct {
	// Stored batches JetStream stored for this sink.
	Stored int64
	// Skipped batches were stored before, by an earlier owner or commit:
	// JetStream refused them as holding a duplicate, or Recover read back
	// every one of their messages.
	Skipped int64
	// Retried counts batches sent again after a refusal that passes: a
	// batch cut short by a change of stream leader, another conditional
	// write on the fence subject in progress.
	Retried int64
}

// batchCounters are a TxSink's BatchStats, counted by its committer.
type batchCounters struct {
	stored, skipped, retried atomic.Int64
}

// Batches returns what the committer of a sink fenced in batches did with
// its atomic batches so far; all zero for a sink without a fence or one
// that commits message by message.
func (s *TxSink) Batches() BatchStats {
	return BatchStats{
		Stored: s.stats.stored.Load(), Skipped: s.stats.skipped.Load(),
		Retried: s.stats.retried.Load(),
	}
}

// fenceable checks that a sink to subject can commit fenced by f to the
// stream of configuration cfg: atomic publish allowed, f one of its fences
// and captured by it.
func fenceable(subject string, cfg jetstream.StreamConfig, f *Fence) error {
	if !strings.HasPrefix(f.Subject, strings.TrimSuffix(fenceWildcard(cfg.Name), ">")) {
		return fmt.Errorf("connector: sink to %q: fence %s is not one of stream %q", subject, f, cfg.Name)
	}
	if !cfg.AllowAtomicPublish {
		return fmt.Errorf("connector: sink to %q: fence %s: stream %q does not allow atomic publish (TakeFence allows it)", subject, f, cfg.Name)
	}
	if !slices.ContainsFunc(cfg.Subjects, func(s string) bool { return subjectCovers(s, f.Subject) }) {
		return fmt.Errorf("connector: sink to %q: fence %s: stream %q does not capture it (TakeFence adds it)", subject, f, cfg.Name)
	}
	return nil
}

// fencedCommit is the commit of one epoch in atomic batches: batch k covers
// the indexes [k*batchMax, (k+1)*batchMax) and sends those not in skip.
type fencedCommit struct {
	job commitJob
	// sizes are the messages each batch sends (0: all of them are stored)
	// and lasts the index of its last one, the commit.
	sizes []int
	lasts []int64
	// next is the first batch not yet stored; tries counts its refusals.
	next  int
	tries int
}

func newFencedCommit(job commitJob) *fencedCommit {
	n := int((job.e.Count + batchMax - 1) / batchMax)
	c := &fencedCommit{job: job, sizes: make([]int, n), lasts: make([]int64, n)}
	c.plan()
	return c
}

// plan sizes the batches from the indexes to skip.
func (c *fencedCommit) plan() {
	for k := range c.sizes {
		lo := int64(k) * batchMax
		hi := min(lo+batchMax, c.job.e.Count)
		c.sizes[k], c.lasts[k] = 0, -1
		if len(c.job.skip) == 0 {
			c.sizes[k], c.lasts[k] = int(hi-lo), hi-1
			continue
		}
		for i := lo; i < hi; i++ {
			if !c.job.skip[i] {
				c.sizes[k]++
				c.lasts[k] = i
			}
		}
	}
}

// done moves next past the batch just stored or skipped and past every
// batch with nothing to send, counting those skipped.
func (c *fencedCommit) done(stats *batchCounters) {
	c.next++
	c.tries = 0
	c.skipEmpty(stats)
}

func (c *fencedCommit) skipEmpty(stats *batchCounters) {
	for c.next < len(c.sizes) && c.sizes[c.next] == 0 {
		stats.skipped.Add(1)
		c.next++
	}
}

// publishFenced publishes epoch job.e as atomic batches, one at a time,
// the first message of each expecting the fence message as the fence
// subject's last: a batch is stored whole, and only while the fence is the
// latest. A batch refused as holding a duplicate is skipped: Recover reads
// back what earlier commits stored and a recovered epoch skips those ids,
// so only a batch stored whole before is refused so. A batch refused for a
// passing reason
// is sent again, with a new batch id and with a reply subject on every
// message, so that a message the server refuses is named by its own error.
func (s *TxSink) publishFenced(job commitJob) error {
	c := newFencedCommit(job)
	c.skipEmpty(&s.stats)
	wait := s.backoff
	for c.next < len(c.sizes) {
		err := s.sendBatches(c)
		if err == nil {
			return nil
		}
		if !retryableBatch(err) || c.tries == batchRetries {
			return err
		}
		if c.tries == 0 {
			wait = s.backoff
		}
		c.tries++
		s.stats.retried.Add(1)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-s.runCtx.Done():
			t.Stop()
			return s.failed(s.runCtx.Err())
		}
		wait = min(2*wait, batchBackoffMax)
	}
	return nil
}

// sendBatches publishes the batches of c from c.next on, waiting for each
// one's outcome before the next, until all are done or one fails.
func (s *TxSink) sendBatches(c *fencedCommit) error {
	p, e := s.batches, c.job.e
	id := idPrefix(e)
	base := len(id)
	from := int64(c.next) * batchMax
	open := false
	return e.each(func(index int64, r *abi.Record) error {
		if index < from || c.next == len(c.sizes) || c.job.skip[index] {
			return nil
		}
		if !open {
			p.begin(c.tries > 0)
			open = true
		}
		last := index == c.lasts[c.next]
		id = strconv.AppendInt(id[:base], index, 10)
		if err := p.add(r, id, last); err != nil {
			return s.failed(err)
		}
		if !last {
			return nil
		}
		open = false
		err := p.outcome(s.runCtx)
		switch {
		case err == nil:
			s.stats.stored.Add(1)
		case hasCode(err, jsErrCodeBatchHasDuplicate):
			s.stats.skipped.Add(1)
		default:
			return s.failed(err)
		}
		c.done(&s.stats)
		return nil
	})
}

// retryableBatch: err refused a batch for a reason that passes, and nothing
// of it was stored.
func retryableBatch(err error) bool {
	return errors.Is(err, jetstream.ErrNoStreamResponse) ||
		hasCode(err, jetstream.JSErrCodeStreamWrongLastSequenceConstant) ||
		hasCode(err, jsErrCodeBatchIncomplete) ||
		hasCode(err, jsErrCodeBatchTooManyInflight) ||
		hasCode(err, jsErrCodeDuplicateInProcess)
}

// hasCode: err is a JetStream API error with code.
func hasCode(err error, code jetstream.ErrorCode) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == code
}
