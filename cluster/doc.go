// Package cluster is what several platform processes on one NATS share to
// run jobs together: the workers' membership (each registers and heartbeats
// in a JetStream key-value bucket) and the leases through which a job is
// owned by exactly one worker at a time (a key-value entry updated with
// compare-and-set on its revision). It builds on JetStream only: there is
// no consensus, storage or membership protocol of its own.
//
// A worker is dead when no heartbeat of it has been seen for the timeout;
// a lease is expired when it has not been renewed for the timeout. Both
// are judged by the observer's own clock from the time it saw the last
// update (through a watch), so clocks need not agree across machines.
package cluster
