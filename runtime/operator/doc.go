// Package operator is the contract between a task and the operators it
// chains: the Stage every operator implements (records, watermarks,
// processing time, end of input), the error policy that decides what a
// failed record becomes (on_udf_error), and the one path by which operators
// call a UDF over a frame and read its answer (GroupCall, Caller).
//
// The operators themselves live in the packages below it (window, join,
// process, record); each owns its processing, its snapshot and its restore.
// Nothing here starts a goroutine: a Stage is owned by the task goroutine
// that calls it.
package operator
