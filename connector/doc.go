// Package connector owns the platform's NATS connectivity: the embedded NATS
// server with JetStream, client connections, and the sources and sinks that
// move records between jobs and the outside world (JetStream sources and
// sinks, KV bucket sources and sinks, core NATS sources and sinks, the
// object store sink, and the generator source for demos and benchmarks).
//
// # Delivery guarantee
//
// A JetStream source reads each subject filter with an ordered consumer and
// reports, per filter, the last stream sequence it delivered (Positions); a
// job restored from those positions resumes after them
// (JetStreamSourceConfig.Start). A JetStreamSink is at least once: Flush
// returns once the server has acknowledged every record written before it,
// and a replayed record can appear twice. A TxSink is exactly once with
// checkpoints: it stages records in epochs sealed at checkpoint barriers and
// publishes an epoch, with deterministic Nats-Msg-Id headers, only once its
// checkpoint completed; Recover publishes restored epochs again, relying on
// JetStream's de-duplication within the stream's duplicate window and
// reading the stored ids back beyond it.
//
// A KV source (NewKVSource) is a JetStream source over a bucket's stream,
// positioned in the same way. A KV sink is at least once (KVSink) or, as a
// TxSink whose records go to their keys' subjects (NewKVTxSink), exactly
// once: each commit writes only the last record of each key, which keeps a
// replay exact with buckets that keep one value per key. An ObjectSink
// stages parts as a TxSink stages epochs and writes each as one object when
// its checkpoint completes, under a name fixed when it was sealed, keeping
// an object already written whole. Core NATS (NATSSource, NATSSink) is at
// most once: no positions, no acknowledgements.
//
// In cluster mode a job may move to another worker while the old one still
// runs. Each sink subtask's new owner then takes its fence (TakeFence), a
// message in the sink's stream, and its TxSink commits messages that the
// server stores only while that fence is the latest: each message carries
// the condition on a stream of one replica, each JetStream atomic batch on
// a replicated stream. The old owner's commits fail with ErrFenced and
// store nothing from then on. A JetStream source skips fence messages and
// drops the headers of atomic batches and of the conditions.
//
// The embedded server acknowledges a write once it is in the file store's
// buffers and syncs to disk periodically (every two minutes by default): a
// killed process loses nothing the kernel has, a power loss can lose
// acknowledged writes.
//
// # Goroutines
//
// A Source and a Sink each belong to one goroutine, the subtask that calls
// them; neither is safe for concurrent use. A JetStreamSource starts one
// goroutine per subject filter it reads, which moves messages from the
// filter's ordered consumer into a bounded queue that Fetch drains; Close
// stops them and waits until they have returned. A NATSSource's messages
// come through a channel the NATS client fills. An ObjectSink's commit
// starts one goroutine per object, encoding it into the put, and waits for
// it. The generator starts no
// goroutines. A JetStreamSink counts the acknowledgements of its publishes
// on a subscription of its own, whose handler the NATS client runs; Close
// ends it. A TxSink starts its committer, which publishes sealed epochs
// while the subtask goes on, and counts acknowledgements the same way; Close
// ends both. A TxSink's snapshot reader may be
// read on another goroutine: sealed epochs do not change, and a reference
// count keeps their spill files until the last reader is done. The NATS
// client and server run goroutines of their own, which end when the
// connection is closed and the server is shut down.
package connector
