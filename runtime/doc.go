// Package runtime turns a job spec into a running execution graph: it keeps
// the uploaded modules, validates jobs against them, chains operators, wires
// tasks with the credit-based exchange, runs every subtask as a goroutine and
// tracks job states.
//
// Goroutine ownership: the Manager owns the job registry (guarded by
// Manager.mu). Each running job has one supervising goroutine that starts one
// goroutine per task and is the only writer of the job's state. A task
// goroutine owns its operator chain, its Wasm instance pools, its exchange
// writers and its gate; no other goroutine touches them. Counters read by the
// API are atomics.
//
// Observation: while a job runs, its backpressure sampler (one goroutine,
// pressure.go) reads every task's figures each second; the metrics collector
// (metrics.go) reads them when /metrics is scraped. Both read only atomics,
// exchange Stats and the Wasm pools' counters, never a task's own state
// (metrics_clock.go, metrics_udf.go). pressureSampler.mu is a leaf.
//
// Checkpoints (checkpoint*.go, barrier.go, restart.go): the supervising
// goroutine runs the job again after a failure, from its latest checkpoint.
// During a run the checkpoint coordinator has a goroutine of its own; it
// reaches tasks only through their buffered control channels (and a gate's
// Wakeup), so a task takes a snapshot on its own goroutine, between batches.
// The blobs a snapshot produced are stored by one writer goroutine per task
// and checkpoint, which acknowledges to the coordinator; the run waits for
// them before it ends.
//
// Lock order: Manager.mu before job.mu before jobCheckpoints.mu; none is held
// while calling into a task, a module, the coordinator or the network.
package runtime
