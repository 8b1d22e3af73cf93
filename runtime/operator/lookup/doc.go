// Package lookup is the async lookup operator (Flink's Async I/O): a
// lookup_request function asks for each record's lookups in NATS KV buckets
// or over HTTP, the operator issues them concurrently, with a bound on the
// records in flight and on their bytes, a timeout and retries, and a
// lookup_result function turns each record and its results into outputs,
// in input order or as they complete, never past a watermark that followed
// the input. Records whose lookups are in flight are part of the operator's
// snapshot and are looked up again after a restore.
package lookup
