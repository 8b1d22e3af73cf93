package host

import (
	"fmt"
	"strings"
)

// ValidationError lists every problem Compile found in a module.
type ValidationError struct {
	Problems []string
}

func (e *ValidationError) Error() string {
	return "invalid module: " + strings.Join(e.Problems, "; ")
}

// ValidationProblems lets callers that do not import host (the HTTP API)
// list the problems.
func (e *ValidationError) ValidationProblems() []string { return e.Problems }

// ErrorKind says how a call into a guest failed.
type ErrorKind string

// Kinds of CallError.
const (
	// KindTrap: the guest trapped (unreachable, out-of-bounds access, a
	// failed host function, ...).
	KindTrap ErrorKind = "trap"
	// KindDeadline: the call ran longer than InstanceConfig.CallTimeout.
	KindDeadline ErrorKind = "deadline"
	// KindMemoryLimit: the guest failed with its memory at the limit, or
	// the module needs more memory than the limit allows.
	KindMemoryLimit ErrorKind = "memory_limit"
	// KindExit: the guest called proc_exit.
	KindExit ErrorKind = "exit"
	// KindBadOutput: the guest returned a location outside its memory.
	KindBadOutput ErrorKind = "bad_output"
)

// CallError is a failure inside a guest. The instance it happened in has
// been discarded; the next Call on the Guest runs on a fresh one.
type CallError struct {
	Module   string
	Function string
	Kind     ErrorKind
	Err      error
}

func (e *CallError) Error() string {
	return fmt.Sprintf("udf[%s] function[%s]: %s: %v", e.Module, e.Function, e.Kind, e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }
