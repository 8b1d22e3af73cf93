package connector

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"wasmstream.io/platform/abi"
)

// Fetch appends up to max records from the subtask's filters to b. A bounded
// source returns io.EOF once every filter has delivered its end.
func (s *JetStreamSource) Fetch(ctx context.Context, b *abi.Batch, max int, wait time.Duration) error {
	s.splits = s.splits[:0]
	if s.closed {
		return ErrClosed
	}
	if s.err != nil {
		return s.err
	}
	if s.bounded && s.open == 0 {
		return io.EOF
	}
	n := 0
	for n < max {
		var d delivery
		select {
		case d = <-s.queue:
		default:
			if n > 0 || wait <= 0 {
				return nil
			}
			var err error
			if d, err = s.await(ctx, wait); err != nil || d.filter < 0 {
				return err
			}
		}
		appended, err := s.deliver(b, d)
		if err != nil {
			return err
		}
		if appended {
			n++
		}
		if s.bounded && s.open == 0 {
			return io.EOF
		}
	}
	return nil
}

// Splits is the number of subject filters the subtask reads.
func (s *JetStreamSource) Splits() int { return len(s.filters) }

// LastSplits is the filter index of each record the last Fetch appended.
func (s *JetStreamSource) LastSplits() []int32 { return s.splits }

// await blocks for the next delivery for at most wait. A delivery with a
// negative filter means none came.
func (s *JetStreamSource) await(ctx context.Context, wait time.Duration) (delivery, error) {
	s.timer.Reset(wait)
	defer s.timer.Stop()
	select {
	case d := <-s.queue:
		return d, nil
	case <-s.timer.C:
		return delivery{filter: -1}, nil
	case <-ctx.Done():
		return delivery{filter: -1}, ctx.Err()
	}
}

// deliver appends d's message to b unless its filter is past its end. An
// error ending a filter's reader fails the source.
func (s *JetStreamSource) deliver(b *abi.Batch, d delivery) (bool, error) {
	f := s.filters[d.filter]
	if f.done {
		return false, nil
	}
	if d.err != nil {
		s.err = fmt.Errorf("connector: read stream %q filter %q: %w", s.stream, f.name, d.err)
		return false, s.err
	}
	meta, err := parseAckSubject(d.msg.Reply())
	if err != nil {
		s.err = fmt.Errorf("connector: read stream %q filter %q: %w", s.stream, f.name, err)
		return false, s.err
	}
	seq := meta.seq
	if s.bounded && seq > f.end {
		s.finish(f)
		return false, nil
	}
	var record bool
	ts := time.Unix(0, meta.nanos).UnixMilli()
	if s.kv != nil {
		// A KV bucket drops superseded values: no gap (kvsource.go).
		record = s.kv.append(b, d.msg, ts)
	} else {
		gap := s.checkGap(f, seq)
		if gap == nil {
			gap = s.checkPending(f, seq, meta.pending)
		}
		if gap != nil {
			if s.onGap != GapSkip {
				s.err = gap
				return false, s.err
			}
			if s.gapFn != nil {
				s.gapFn(gap)
			}
		}
		// A fence of a sink writing to the stream (TakeFence) is no record.
		record = !strings.HasPrefix(d.msg.Subject(), fencePrefix)
		if record {
			s.scratch.append(b, d.msg.Data(), ts, d.msg.Headers())
		}
	}
	if record {
		s.splits = append(s.splits, int32(d.filter))
	}
	f.pos = seq
	f.pending.Store(meta.pending)
	// NumPending is 0 before the end only when the messages up to the end
	// were removed from the stream after the source started.
	if s.bounded && (seq == f.end || meta.pending == 0) {
		s.finish(f)
	}
	return record, nil
}

// recordScratch turns NATS messages into records without allocating once it
// has grown to the largest header set seen.
type recordScratch struct {
	names   []string
	bytes   []byte
	headers []abi.Header
}

// append adds a record with an empty key. NATS decodes headers into a map,
// so their order across names is not kept: names are emitted sorted, and
// the values of a repeated name in the order they were sent. The headers a
// fenced sink wrote the message with are dropped (writeHeader).
func (r *recordScratch) append(b *abi.Batch, value []byte, ts int64, h nats.Header) {
	r.headers = r.headers[:0]
	if len(h) > 0 {
		r.names = r.names[:0]
		for name := range h {
			if !writeHeader(name) {
				r.names = append(r.names, name)
			}
		}
		slices.Sort(r.names)
		// Slices taken from bytes stay valid if it grows: they keep the
		// old backing array, which nothing writes to again.
		r.bytes = r.bytes[:0]
		for _, name := range r.names {
			for _, v := range h[name] {
				start := len(r.bytes)
				r.bytes = append(r.bytes, name...)
				mid := len(r.bytes)
				r.bytes = append(r.bytes, v...)
				end := len(r.bytes)
				r.headers = append(r.headers, abi.Header{Name: r.bytes[start:mid:mid], Value: r.bytes[mid:end:end]})
			}
		}
	}
	b.AppendParts(nil, value, ts, r.headers)
}

// writeHeader: a header of that name says how a fenced sink wrote the
// message (as part of an atomic batch, on the condition of its fence), not
// what the record is; passed on, it would make a sink's publish of the
// record part of a batch or conditional.
func writeHeader(name string) bool {
	switch name {
	case hdrBatchID, hdrBatchSeq, hdrBatchCommit, jetstream.ExpectedLastSubjSeqHeader, jetstream.ExpectedLastSubjSeqSubjHeader:
		return true
	}
	return false
}
