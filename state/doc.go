// Package state owns keyed state: key groups and their ranges, value, list
// and map state scoped to a key and a namespace (a window, or none), state
// TTL as Flink's StateTtlConfig, the backends that hold it (memory with
// copy-on-write snapshots and a byte budget, Pebble on disk behind a
// write-back cache of recent entries), and snapshots organised by key group
// that restore into any parallelism.
//
// Keyed is the front every caller uses; a backend is the small store
// interface behind it. Keys are spread over max_parallelism key groups and a
// subtask owns a Range of them; every entry lives in its key's group, and a
// snapshot writes one section per key group so that a restore reads only the
// groups it now owns.
//
// Ownership: a Keyed belongs to the goroutine of the task that owns it; its
// methods must not run concurrently, and the slices they return are valid
// until its next call. Two things may run on other goroutines: writing a
// Snapshot (Snapshot.WriteTo, then Release), which reads a consistent view
// while the task goes on, and the Pebble backend's background sweeper.
// Locks: the memory backend's snapshot list has one mutex (held only to
// add or release a snapshot); the Pebble backend has one mutex that the task
// and the sweeper take around each access to the database and its cache. No
// lock is held while another is taken.
package state
