package exchange

import "errors"

// Channels between processes: the seam a transport (package
// runtime/exchange/netx) uses when a channel's producer and consumer run in
// different processes. Such a channel exists in both, and the transport
// joins the two halves:
//
//   - In the producer's process the channel is the writer's as usual
//     (Edge.Channels(consumer)[producer]), but an Outbox takes it instead of
//     a gate. The writer fills, backlogs and overtakes on it exactly as
//     in-process. The outbox's credits are only those the receiver granted
//     (Outbox.Credit); it hands the transport each buffer the credits allow,
//     and each event, in the channel's order (Outbox.Next), and keeps the
//     buffers sent in flight, still counted in the writer's pool, until the
//     receiver reports them recycled (Outbox.Release). So the writer's pool
//     and its backpressure are those of an in-process channel.
//   - In the consumer's process the channel is in the consumer's gate as
//     usual, and an Inbox feeds it in place of a writer: the transport hands
//     it each parcel received (Inbox.Receive), and the inbox announces back,
//     through the function it was made with, the credits it grants (the
//     channel's exclusive credits as its buffers are recycled, and floating
//     buffers of the gate to a channel whose sender reported a backlog) and
//     the buffers recycled, which the sender releases.
//
// An overtaking event overtakes on both sides: in the outbox the buffers
// not sent yet (saved by Writer.OvertakeEvent), in the gate the buffers
// received and not taken (saved by Inbox.Receive): together what it
// overtakes in-process. The transport must deliver each channel's parcels
// in order and whole; detecting that it did not is its business.

// ErrProtocol is wrapped by the error Inbox.Receive returns for a parcel
// its sender had no right to send: a data buffer without credit, anything
// after EndOfPartition, or an unknown kind.
var ErrProtocol = errors.New("exchange: remote channel protocol violated")

// Parcel is a buffer as a transport carries it between processes: what
// Outbox.Next hands out and Inbox.Receive takes.
type Parcel struct {
	// Kind is the buffer's kind, or KindBacklog for an announcement of the
	// sender's Backlog alone.
	Kind Kind
	// Data is the frame, or the piece of a record, of a data buffer; nil
	// for the others. From Outbox.Next it aliases the writer's buffer,
	// which stays in flight until the receiver has had it and released it;
	// Inbox.Receive keeps it until the consumer recycles the buffer.
	Data []byte
	// Event is a KindEvent's event.
	Event Event
	// RecordSize is the encoded size of the record that a KindFragment
	// starts; 0 on the other fragments.
	RecordSize int
	// Overtakes marks an event sent by Writer.OvertakeEvent: it was sent
	// without credit and at once, and goes to the head of the receiving
	// channel's queue.
	Overtakes bool
	// Backlog is the number of data buffers waiting for credit at the
	// sender, behind this one.
	Backlog int
}
