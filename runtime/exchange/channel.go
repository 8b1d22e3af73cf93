package exchange

import "wasmstream.io/platform/abi"

// frameHeader is the record count that starts every data buffer, making it
// an abi input frame.
const frameHeader = 4

// InputChannel connects one producer subtask to one consumer subtask of an
// edge: the producer's subpartition and the consumer's input channel in one.
// Its queue holds the buffers sent to the consumer (each holding a credit,
// or no credit for an event) followed by the sender's backlog, which waits
// for credit. gate, index and exclusive are fixed once NewGate (or
// NewOutbox) has run, inbox once NewInbox has; asm belongs to the consumer's
// goroutine; the gate's mutex guards the rest.
//
// A channel between processes (remote.go) is two: in the producer's process
// it is in an Outbox, where the queue is what waits to be sent and credits
// are what the receiver granted; in the consumer's, an Inbox feeds it, its
// backlog counts what its sender reported waiting, and granted the floating
// buffers announced to the sender and not used yet.
type InputChannel struct {
	gate *Gate
	// index is the channel's position in its gate.
	index int
	// exclusive is the channel's number of credits; credits is how many of
	// them are unused.
	exclusive int
	credits   int
	// head and tail are the queue; backlogHead is its first buffer not yet
	// sent, nil when the backlog is empty. queued counts the sent buffers
	// ahead of it and backlog the data buffers from it on.
	head, tail  *Buffer
	backlogHead *Buffer
	queued      int
	backlog     int
	// stalled: the backlog's head waits for a credit or a floating buffer.
	stalled bool
	// blocked: Gate.Next skips the channel (barrier alignment).
	blocked bool
	// inReady: the channel is in the gate's ready ring.
	inReady bool
	// asm reassembles a record that spans buffers.
	asm []byte

	// In an outbox: flightHead and flightTail list the buffers sent and not
	// released by the receiver; announce: Outbox.Next owes the receiver the
	// backlog.
	flightHead, flightTail *Buffer
	announce               bool
	// Fed by an inbox: granted floating buffers not used yet; ended: its
	// EndOfPartition arrived.
	inbox   *Inbox
	granted int
	ended   bool
}

// assemble adds fragment b to the record being reassembled and recycles b.
// After the last fragment it returns the record as a buffer of its own.
func (c *InputChannel) assemble(b *Buffer) *Buffer {
	if c.asm == nil {
		c.asm = abi.AppendInputHeader(make([]byte, 0, frameHeader+b.size), 1)
	}
	c.asm = append(c.asm, b.data...)
	last := b.kind == KindLastFragment
	b.Recycle()
	if !last {
		return nil
	}
	r := &Buffer{data: c.asm, ch: c}
	c.asm = nil
	_ = r.rd.Reset(r.data)
	return r
}
