// Package checkpoint owns the checkpoint coordinator and storage: triggering
// barriers, collecting acknowledgements, completing checkpoints and
// savepoints, their history, and the stores that keep them (a local
// directory or a JetStream object store). Barrier alignment itself lives
// beside the exchange inputs in runtime; the runtime drives the coordinator
// through the Tasks interface and reports each task's part with Ack,
// Decline and Finished. A checkpoint that fails ends with a FailureError
// whose FailureReason the history keeps beside the message. When several
// processes may run one job (cluster mode), a Fence records each trigger
// and completion through the job's lease, so that a process that lost the
// lease can neither take the new owner's checkpoint ids nor complete a
// checkpoint that counts (ReasonFenced).
//
// # Goroutines and locks
//
// A Coordinator runs in its own goroutine (Run): it alone triggers
// checkpoints, times them out, writes their metadata and prunes old ones.
// Ack, Decline, Finished, Request and Savepoint may be called from any
// goroutine (task goroutines and their snapshot writers, the API); they take
// Coordinator.mu, which is never held while calling the Tasks interface,
// the Store or the Fence, and wake Run through channels that hold at most
// one token.
// History has a mutex of its own, a leaf.
package checkpoint
