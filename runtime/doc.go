// Package runtime is the job manager: it keeps the uploaded modules,
// validates jobs against them (runtime/plan builds the plan), keeps the job
// registry in JetStream KV, tracks job states as Flink does, takes
// savepoints through a job's checkpointing, and serves what the HTTP API
// reads (jobs, vertices, backpressure, checkpoints, metrics). Running a
// job's subtasks is runtime/exec's; the operators are runtime/operator's.
//
// Goroutine ownership: the Manager owns the job registry (guarded by
// Manager.mu). Each running job has one supervising goroutine, which runs
// the job's exec.Job and is the only writer of the job's state; exec tells
// it what runs do through exec.Observer.
//
// Lock order: Manager.mu before job.mu before exec.Checkpoints.mu; none is
// held while calling into a task, a module, the coordinator or the network.
package runtime
