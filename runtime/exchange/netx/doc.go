// Package netx carries exchange channels between processes over NATS core
// subjects, with the in-process exchange's buffers and its credit-based
// protocol: the network exchange between subtasks on different workers.
// Subtasks on the same worker keep the in-process exchange.
//
// # Protocol
//
// Each channel (one producer subtask to one consumer subtask of an edge,
// named by an Address) has a data subject, _platform.x.<job>.<run>.<edge>.
// <from>.<to>, and a control subject, the same with ".ctl". The Sender
// publishes every buffer of the channel, data or event, as one message on
// the data subject, prefixed with a 14-byte header (wire.go) carrying the
// channel's sequence number (1, 2, ...), the buffer's kind and the sender's
// backlog. It sends a data buffer only against a credit its Receiver
// announced; events need none but wait behind the backlog, in order with
// the records, except an unaligned barrier (Writer.OvertakeEvent), which is
// sent at once and goes to the head of the channel's queue in the gate. A
// sender with a backlog and no credit announces the backlog in a message of
// its own.
//
// The Receiver checks each message's sequence number: a gap (the client
// dropped messages of a slow consumer, or the connection lost them) or a
// reordering is a SequenceError that fails the gate, and so the task and
// the job, which restarts from its latest checkpoint; a slow consumer the
// client reports fails it at once. What arrives in order goes into the
// gate as an in-process writer's buffers would. The receiver announces on
// the control subject the credits the gate grants (the channel's exclusive
// credits as its buffers are recycled, and floating buffers of the gate to
// a channel whose sender reported a backlog) and the buffers recycled,
// upon which the sender returns its copies to the writer's pool. So the
// writer's pool holds what is in flight, as in-process, and backpressure
// across processes shows in WriterStats exactly as inside one.
// Announcements carry totals, and are repeated every Config.Refresh, so a
// lost one only delays the sender. A sender publishes nothing but hellos
// until its receiver has answered one, so either may start first.
//
// A lost last message (the end of partition, or a record after which the
// channel goes quiet) would show no gap: no later message comes. So the
// announcements also carry the last sequence number received, and every
// Refresh the sender publishes a tail, the last sequence number it sent, on
// each channel whose receiver has not announced it. The tail follows the
// channel's messages on the subject, so a receiver that lacks one of them
// when the tail arrives lost it: a SequenceError. A sender's Close waits
// for its receivers to announce the end of partition, so a lost end fails
// the receiving task within a Refresh rather than leaving it waiting.
//
// # Attaching to an edge
//
// Every process of a job builds the job's edges as usual (exchange.NewEdge)
// and its own subtasks' gates; a channel whose producer and consumer run in
// different processes then exists in both, and each process hands its half
// to this package before any writer sends:
//
//   - the producer's process, for each consumer c elsewhere of producer p,
//     passes Link{Address, edge.Channels(c)[p]} to NewSender (one Sender
//     may carry the channels of several writers); the writer emits, closes
//     and overtakes on it as on any channel;
//   - the consumer's process builds consumer c's gate over all of
//     edge.Channels(c) as usual, then passes Link{Address,
//     edge.Channels(c)[p]} for each producer p elsewhere to NewReceiver,
//     with Config.Overtaken recording the frames unaligned barriers
//     overtake in the gate as the consumer's in-flight input of that
//     channel (the producer's Writer.OvertakeEvent saves the part it
//     overtakes in its process, what was not sent yet);
//   - Config.Failed fails the task; the gate fails by itself.
//
// Addresses must be the same on both sides, with a run number new for every
// run of the job. A producer's task closes its Sender after closing its
// writer (Close waits for the end of partition to be published); a
// consumer's task closes its Receiver once the gate has returned io.EOF, or
// on failure.
package netx
