package checkpoint

// Barrier is the in-band event that splits a stream into the records before
// checkpoint ID and those after it. Sources inject it; tasks forward it on
// every output channel once their state is captured.
type Barrier struct {
	ID   int64
	Kind Kind
	// Stop: the savepoint stops the job; sources emit nothing after it.
	Stop bool
}
