package connector

import (
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// fencedInBatches reports whether a fenced sink to the stream of
// configuration cfg commits in atomic batches, each conditional on the
// fence once: on a replicated stream. A stream of one replica has no Raft
// group, on a single server as in a cluster: its one server checks each
// message's condition against its store as it stores the message, one
// message after the other in the order they arrive, the fence's write
// among them. So there every message carries the condition and many are
// in flight at once, as unfenced: a fence written before a message makes
// the server refuse it, and none after the fence is stored. An atomic batch
// would cost such a stream far more (a file store of its own per batch,
// created, synced and removed by the stream's one goroutine).
//
// A replicated stream refuses a condition on a subject while another
// proposal with one on that subject is in flight, so there one message of
// many, or one batch, can carry it at a time. A stream whose replicas grow
// while a sink commits message by message makes the server refuse the
// sink's messages (the condition is in process); the sink fails and its
// recovery commits in batches.
func fencedInBatches(cfg jetstream.StreamConfig) bool { return cfg.Replicas > 1 }

// newFencedPublisher is an ackPublisher whose messages each carry their id
// as HeaderID and expect fence f as the last message on its subject. They
// carry no Nats-Msg-Id: the fence already keeps a commit from storing a
// record twice, with Recover's advance and read-back, so JetStream's
// de-duplication would cost the server a map entry per message for nothing.
func newFencedPublisher(nc *nats.Conn, subject string, f *Fence) (*ackPublisher, error) {
	p, err := newAckPublisher(nc, subject, true)
	if err != nil {
		return nil, err
	}
	p.hdr.expectFence(f)
	return p, nil
}
