// Package exchange owns the credit-based, bounded, in-process data exchange
// between the tasks of a job: edges, their writers (one per producer subtask,
// Flink's result partition) and input channels, the gates of consumer
// subtasks, buffers, and the partitioners that choose a record's channel.
//
// Records travel in buffers: a data buffer is an abi input frame (a record
// count, then records in abi.AppendRecord's layout), so it can go to a UDF as
// it is, and records decoded from it alias its bytes until it is recycled. A
// record larger than a buffer travels as consecutive fragments of its channel
// and reaches the consumer reassembled as a buffer of its own. Control
// events, the closed set Event (Watermark, Idle, Barrier, EndOfPartition),
// are buffers too, in order with the records of their channel.
//
// # Flow control
//
// Every channel has Config.ExclusivePerChannel credits, and a gate has
// Config.FloatingPerGate floating buffers for all its channels. A finished
// data buffer is sent (queued at the gate, visible to Gate.Next) only against
// a credit of its channel, or else a free floating buffer; otherwise it
// stays in the channel's backlog. Floating buffers are granted only to
// channels with a backlog: when one is returned, it goes to the channel with
// the largest backlog. Events need no credit but wait behind the backlog.
// Recycling a buffer returns its credit to its channel (which sends its next
// backlogged buffer) or its floating buffer to the gate (which grants it
// again), and its memory to its writer's pool. Buffers are not copied:
// the consumer reads the very buffer the writer filled.
//
// Memory is bounded by the writers' pools: a writer owns
// Config.BuffersPerWriter buffers of Config.BufferSize bytes, counting what
// it is filling, its backlogs and what its consumers hold; an event takes a
// buffer too, so events are bounded like records. When the pool is
// empty the writer waits; that wait is backpressure, reported as
// WriterStats.BackpressuredNanos. Reassembling a record larger than a buffer
// takes one allocation of the record's size on each side, below
// Config.MaxRecordSize.
//
// # Overtaking
//
// Writer.OvertakeEvent sends an event (an unaligned checkpoint barrier) to
// the head of each channel's queue, ahead of the data the consumer has not
// taken, sent or backlogged; only the rest of a record the consumer is
// reassembling stays ahead of it. The overtaken buffers stay where they are
// and are delivered after the event; the writer hands their frames to the
// caller, under the gate's mutex, to be copied into the checkpoint. The
// event takes no buffer of the pool, so it goes out under any backpressure.
//
// # Channels between processes
//
// A channel whose producer and consumer run in different processes is
// carried by a transport (package runtime/exchange/netx) through a seam of
// two halves (remote.go). In the producer's process an Outbox takes the
// writer's channel in place of a gate: its credits are those the receiver
// announced, it hands the transport each buffer they allow, and each event,
// as a Parcel, and keeps the buffers sent in flight, in the writer's pool,
// until the receiver has recycled them. In the consumer's process an Inbox
// feeds the gate's channel in place of a writer, and announces back the
// credits the gate grants and the buffers the consumer recycled. Credits,
// floating buffers, backpressure and overtaking work as described above;
// only, a floating buffer goes to a channel whose sender reported a
// backlog, and an overtaking event overtakes on both sides.
//
// # Flushing
//
// A buffer is sent when full, before an event on its channel, on Flush and
// Close, and by Config.BufferTimeout: 0 sends every record at once; > 0 arms
// a timer when a partial buffer is started while none is pending, and the
// timer flushes every partial buffer of the writer.
//
// # Goroutines and locks
//
// A writer belongs to its producer's goroutine, which alone fills its
// partial buffers. With BufferTimeout <= 0 no other goroutine touches them
// and Emit takes no lock: per record it only appends to the current buffer.
// With BufferTimeout > 0 the writer's timer (time.AfterFunc, the only
// goroutine the package starts; it ends once it has flushed) runs timedFlush,
// so every writer method and timedFlush hold Writer.mu: Emit once per
// record, EmitBatch once per batch, which is why callers with batches should
// prefer EmitBatch. A writer waiting for a free buffer releases Writer.mu
// while it waits.
//
// A gate's mutex guards its ready ring, credits, floating buffers and every
// queue of its channels. It is taken once per buffer, never per record: by
// the writer that sends, by Gate.Next, and by Buffer.Recycle. Gate.Next,
// Block and Unblock belong to the consumer's goroutine, which also alone
// reassembles spanning records. A buffer belongs to the consumer from Next to
// Recycle; Recycle may run on any goroutine. Stats may be read from any
// goroutine.
//
// Lock order: Writer.mu, then Gate.mu (an Outbox's mutex is its gate's);
// the mutexes of the wait clocks are leaves. Nothing blocks while holding
// Gate.mu, an Inbox's announce function included, which runs under it;
// returning a buffer to its pool never blocks, since a writer's pool has
// room for all its buffers and a gate's pool of received buffers lets go
// of what does not fit.
//
// Blocking calls (Emit, EmitEvent, BroadcastEvent, Close, Gate.Next) consult
// their context only when they have to wait, so a cancelled context still
// lets them complete what needs no waiting.
package exchange
