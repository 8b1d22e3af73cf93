// Package exec runs the subtasks of a plan: it builds each task's chain of
// operators (plan.Subtasks' chains, wired with the credit-based exchange),
// runs every task in its own goroutine, aligns checkpoint barriers, takes
// and restores the tasks' part of checkpoints, and restarts a failed run
// from the latest checkpoint as the job's restart strategy allows. It
// reports tasks' figures for metrics and backpressure. A Job is what a run
// needs; the job manager (package runtime) owns its lifecycle.
//
// Goroutine ownership: a task goroutine owns its operator chain, its Wasm
// guests, its exchange writers and its gate; no other goroutine touches
// them. Counters and figures read by the API are atomics.
//
// Observation: while a job runs, its backpressure sampler (one goroutine,
// pressure.go) reads every task's figures each second; the metrics
// collector (metrics.go) reads them when /metrics is scraped. Both read only
// atomics, exchange Stats and the guests' counters, never a task's own
// state. PressureSampler.mu is a leaf.
//
// Checkpoints (checkpoint*.go, barrier.go, restart.go): during a run the
// checkpoint coordinator has a goroutine of its own; it reaches tasks only
// through their buffered control channels (and a gate's Wakeup), so a task
// takes a snapshot on its own goroutine, between batches. The blobs a
// snapshot produced are stored by one writer goroutine per task and
// checkpoint, which acknowledges to the coordinator; the run waits for them
// before it ends. Checkpoints.mu is a leaf: it is never held while calling
// a task, the coordinator or the network.
package exec
