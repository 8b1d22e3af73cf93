package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"wasmstream.io/platform/abi"
)

// batchPublisher publishes a fenced sink's JetStream atomic batches, one at
// a time: begin, add each message (the last commits the batch), outcome.
// Every message carries Nats-Batch-Id and Nats-Batch-Sequence (from 1), the
// last Nats-Batch-Commit, and the first the fence as the expected last
// sequence of the fence subject, which the server checks when it commits
// the batch.
//
// The server answers every message of a batch that has a reply subject: a
// staged message with an empty message (or an error), the commit with the
// batch's PubAck (or the error that refused the whole batch). So staged
// messages go out without one and only the commit is answered, unless the
// batch is verbose (a resend after a refusal): then every message asks, so
// that a message the server refused is named by its own error, not only by
// the batch being incomplete. A batch's replies come to a subject of its own,
// inbox.<batch id>, and replies to an earlier batch are dropped.
//
// Only the committer goroutine uses it. The message, its header maps and
// values are reused, as in ackPublisher.
type batchPublisher struct {
	nc    *nats.Conn
	sub   *nats.Subscription
	inbox string

	msg nats.Msg
	hdr recordHeaders
	seq [20]byte

	// reply is the current batch's reply subject, n its messages so far;
	// verbose: every message asks for a reply.
	reply   string
	n       int
	verbose bool
}

// newBatchPublisher subscribes to the replies to batches published on nc to
// subject under fence.
func newBatchPublisher(nc *nats.Conn, subject string, fence *Fence) (*batchPublisher, error) {
	p := &batchPublisher{nc: nc, inbox: nc.NewInbox(), msg: nats.Msg{Subject: subject}}
	p.hdr.init(true, true)
	p.hdr.vals[valBatchCommit] = "1"
	p.hdr.fenceAt(fence.Seq)
	p.hdr.vals[valFenceSubject] = fence.Subject
	sub, err := nc.SubscribeSync(p.inbox + ".*")
	if err != nil {
		return nil, fmt.Errorf("connector: sink to %q: subscribe to batch acknowledgements: %w", subject, err)
	}
	p.sub = sub
	return p, nil
}

// begin starts a batch with a new id.
func (p *batchPublisher) begin(verbose bool) {
	id := nuid.Next()
	p.hdr.vals[valBatchID] = id
	p.reply = p.inbox + "." + id
	p.n, p.verbose = 0, verbose
}

// add publishes the message of record r with id as the batch's next; last
// commits the batch. r must have passed validRecord; nothing of it is kept.
func (p *batchPublisher) add(r *abi.Record, id []byte, last bool) error {
	h := p.hdr.header(r, id)
	p.n++
	first := p.n == 1
	p.hdr.vals[valBatchSeq] = aliasString(strconv.AppendInt(p.seq[:0], int64(p.n), 10))
	h[hdrBatchCommit] = p.hdr.slot(valBatchCommit, last)
	h[jetstream.ExpectedLastSubjSeqHeader] = p.hdr.slot(valFenceSeq, first)
	h[jetstream.ExpectedLastSubjSeqSubjHeader] = p.hdr.slot(valFenceSubject, first)
	p.msg.Header = h
	p.msg.Data = r.Value
	p.msg.Reply = ""
	if last || p.verbose {
		p.msg.Reply = p.reply
	}
	err := p.nc.PublishMsg(&p.msg)
	p.msg.Data = nil
	p.hdr.reset()
	p.hdr.vals[valBatchSeq] = ""
	return err
}

// outcome waits for the replies to the batch just committed and returns
// the first error they carry: nil once the batch is stored. It gives up
// when no reply came for publishAckTimeout, and returns ctx's error as it
// is when ctx ends first.
func (p *batchPublisher) outcome(ctx context.Context) error {
	want := 1
	if p.verbose {
		want = p.n
	}
	var first error
	for got := 0; got < want; {
		wait, cancel := context.WithTimeout(ctx, publishAckTimeout)
		m, err := p.sub.NextMsgWithContext(wait)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("%w: %d of %d replies to batch %s", ErrAckTimeout, got, want, p.hdr.vals[valBatchID])
			}
			return err
		}
		if m.Subject != p.reply {
			continue
		}
		got++
		if err := batchReply(m, got == want, p.n); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// batchReply is the error a reply to a batch of n messages reports, if
// any: a staged message's is empty, the commit's a PubAck for n messages.
func batchReply(m *nats.Msg, commit bool, n int) error {
	if !commit && len(m.Data) == 0 && m.Header.Get("Status") == "" {
		return nil
	}
	if err := ackError(m); err != nil || !commit {
		return err
	}
	var ack struct {
		Count int `json:"count"`
	}
	if err := json.Unmarshal(m.Data, &ack); err != nil || ack.Count != n {
		return fmt.Errorf("%w: batch of %d messages acknowledged with %q", jetstream.ErrInvalidJSAck, n, m.Data)
	}
	return nil
}

// close stops receiving replies.
func (p *batchPublisher) close() { _ = p.sub.Unsubscribe() }
