package spec

// KVSource reads a NATS key-value bucket: the current entry of each key
// first, then every update. Records have the entry's key, value and time,
// and the header Platform-Op (put or delete).
type KVSource struct {
	Bucket string `json:"bucket" required:"true"`
	// Keys is a NATS subject filter over the bucket's keys; default all.
	Keys string `json:"keys" default:"'>'"`
	// Bounded reads the entries present when the job starts and ends.
	Bounded bool `json:"bounded,omitzero"`
}

// NATSSource subscribes to a core NATS subject: at most once, nothing is
// replayed after a failure.
type NATSSource struct {
	// Subject may hold wildcards.
	Subject string `json:"subject" required:"true"`
	// Queue is the queue group the source's subtasks subscribe in; none:
	// a group of their own, so that each message reaches one subtask.
	Queue string `json:"queue,omitempty"`
	// AllowAtMostOnce admits the source into an exactly_once job.
	AllowAtMostOnce bool `json:"allow_at_most_once,omitzero"`
}

// KVSink writes each record's value under its key in a NATS key-value
// bucket; a record with the header Platform-Op: delete deletes the key.
type KVSink struct {
	Bucket string `json:"bucket" required:"true"`
	// MaxInFlight bounds unacknowledged writes; default 4096.
	MaxInFlight int `json:"max_in_flight" default:"4096"`
}

// NATSSink publishes to a core NATS subject: at most once.
type NATSSink struct {
	Subject string `json:"subject" required:"true"`
	// AllowAtMostOnce admits the sink into an exactly_once job.
	AllowAtMostOnce bool `json:"allow_at_most_once,omitzero"`
}

// ObjectSink writes objects to a NATS object store bucket: one per
// subtask and checkpoint (or roll), put when the checkpoint completes.
type ObjectSink struct {
	Bucket string `json:"bucket" required:"true"`
	// Prefix starts every object's name, followed by '/'.
	Prefix string `json:"prefix,omitempty"`
	// Format is jsonl: a line {"key", "value", "timestamp"} per record.
	Format string `json:"format" default:"jsonl"`
	// RollBytes starts another object within a checkpoint once the
	// current one holds this many bytes; 0: no limit.
	RollBytes int64 `json:"roll_bytes,omitzero"`
	// RollInterval starts another object within a checkpoint once the
	// current one is this old; 0: no limit.
	RollInterval Duration `json:"roll_interval,omitzero"`
}
