// Package connector owns the platform's NATS connectivity: the embedded NATS
// server with JetStream, client connections, and the sources and sinks that
// move records between jobs and the outside world (JetStream sources and
// sinks, and the generator source for demos and benchmarks).
//
// # Delivery guarantee
//
// For now delivery is at least once. A JetStream source reads each subject
// filter with an ordered consumer and reports, per filter, the last stream
// sequence it delivered (Positions); a job restored from those positions
// resumes after them (JetStreamSourceConfig.Start), so nothing is lost, and
// records delivered after the last saved position are delivered again. A
// JetStream sink returns from Flush only once the server has acknowledged
// every record written before it; a crash between Write and Flush can make a
// replayed record appear twice in the sink's stream. Exactly-once output
// (staged epochs published with deterministic Nats-Msg-Id headers) builds on
// this package and is not provided by it.
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
// stops them and waits until they have returned. The generator and the sink
// start no goroutines (the sink waits on the publish acknowledgements that
// the NATS client delivers). The NATS client and server run goroutines of
// their own, which end when the connection is closed and the server is shut
// down.
package connector
