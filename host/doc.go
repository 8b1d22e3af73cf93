// Package host owns the WebAssembly host of the platform: it compiles UDF
// modules with wazero (behind one compilation cache, on disk when configured),
// validates them against ABI v1 (exports, imports, ABI version and
// self-description) and the limits on what a module may declare
// (limits.go), and runs their functions in pooled, sandboxed instances
// with per-job memory limits, a process-wide memory budget (linearmem.go)
// and per-call deadlines. Deadlines rest on
// instrumentation: before compiling a module the host adds a stop flag and
// a cheap check at every loop head (instrument.go), which a Guest's watchdog
// goroutine trips when a call runs too long. It provides the guest's
// host functions (the `platform` import module and a WASI preview 1 subset
// without files or sockets), sends guest logs, stdout and stderr into slog,
// and turns what goes wrong inside a guest into a typed *CallError.
//
// Ownership: a Host and its Modules are safe for concurrent use. A Guest is
// owned by one task goroutine: Call, Close and the slices Call returns belong
// to that goroutine. A Guest's instance lives until an error discards it or
// the Guest is closed; a healthy instance then goes to a small idle list kept
// per module and memory limit, from which later Guests take it instead of
// instantiating again.
package host
