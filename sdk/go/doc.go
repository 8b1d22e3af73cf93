// Package udf is the Go SDK for writing user-defined functions of the
// platform as WebAssembly modules.
//
// A UDF module is a package main that registers ordinary Go functions by name
// from init, with Map, Filter, FlatMap, Key and Timestamp, or keyed process
// functions with Process and OnTimer (which keep state declared with
// ValueState, ListState and MapState, and set timers), or window functions
// with Aggregate, AggregateOf, Reduce, ProcessWindow (ProcessWindowWithState
// with per-window state) and SessionGap, or join
// functions with Join and CoGroup, or a punctuated watermark with Watermark,
// and is built as a WebAssembly reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o mymodule.wasm .
//
// The host calls the module's _initialize export once per instance, which runs
// the package inits (main.main never runs). Names are unique within a module:
// registering a name twice panics.
//
// On GOOS=wasip1 this package provides the exports of ABI v1 (docs/ABI.md): it
// describes the registered functions, decodes each input frame, calls the
// function once per record and encodes the output frame. Invoke runs the same
// dispatch without WebAssembly, on every GOOS, so a module's unit tests run
// natively and exercise exactly the frame encoding that runs inside
// WebAssembly; Harness does the same for keyed functions and window process
// functions with state, with in-memory state and timers.
//
// A function that returns an error or panics for a record reports an error for
// that record only; the host then handles the record according to the job's
// on_udf_error setting. The other records of the batch are unaffected.
//
// The Record a function receives is valid only during that call: its slices
// alias the input frame, which the next call overwrites. A function may modify
// the record's bytes in place and return it; to keep data across calls, copy
// it. Instances may be discarded and recreated at any time, so a function must
// not rely on package variables surviving between calls.
package udf
