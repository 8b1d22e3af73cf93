package spec

// Sink is one output of the job. A sink without Input receives the side
// output of the operators whose late_output names it.
type Sink struct {
	ID    string `json:"id" required:"true"`
	Input string `json:"input,omitempty"`
	// Parallelism defaults to the job's.
	Parallelism int `json:"parallelism"`
	// Partition overrides how records reach the sink from its input
	// (forward | rebalance | broadcast).
	Partition   string      `json:"partition,omitempty"`
	JetStream   *JSSink     `json:"jetstream,omitempty"`
	KV          *KVSink     `json:"kv,omitempty"`
	NATS        *NATSSink   `json:"nats,omitempty"`
	ObjectStore *ObjectSink `json:"object_store,omitempty"`
	// Discard counts the records and drops them (benchmarks and tests).
	Discard bool `json:"discard,omitempty"`
	// Print writes each record to the platform's log and keeps the last
	// ones for GET /v1/jobs/{id}/sample.
	Print *PrintSink `json:"print,omitempty"`
	// Throttle slows the sink to at most this many records per second,
	// shared by its subtasks; 0: no limit. An extension for experiments.
	Throttle int `json:"throttle,omitzero"`
}

// JSSink publishes to a JetStream subject.
type JSSink struct {
	Subject string `json:"subject" required:"true"`
	// MaxInFlight bounds unacknowledged publishes; default 4096.
	MaxInFlight int `json:"max_in_flight" default:"4096"`
}

// PrintSink writes each record as an INFO line of the platform's log, named
// by job and sink, and keeps the last Keep records of each subtask in
// memory, for the job's sample.
type PrintSink struct {
	// Format is text ("key value") or json ({"key", "value", "timestamp"}).
	Format string `json:"format" default:"text"`
	// Keep is how many of its last records each subtask keeps; default 100.
	Keep int `json:"keep" default:"100"`
}
