// Package plan turns a job spec into what to run: a logical graph of
// sources, operators and sinks with their module functions resolved and
// validated (Build), and from it the execution graph of subtasks (Subtasks):
// which vertices are chained into one task, how records are shipped between
// tasks, the parallelism of each and the key groups each subtask owns.
//
// A Plan is a plain value with no goroutines and no handles on modules or
// connections: it names module functions by module id and index, carries
// the self-descriptions it was checked against, and encodes to JSON and back
// (MarshalJSON), so that it can be sent to another process. Where each
// subtask runs, and how, belongs to the packages that execute a plan.
package plan
