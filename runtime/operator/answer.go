package operator

import (
	"fmt"

	"wasmstream.io/platform/abi"
)

// Answer reads a function's output entries as the ABI orders them, the one
// way every operator does: entries come in input order (records, groups or
// timers; an input may have several), and an error entry fails its input,
// so that whatever the input's other entries emitted, before or after it,
// is discarded. The caller checks which tags its kind may write.
type Answer struct {
	unit   string
	last   int
	failed bool
}

// Verdict says what to do with an entry.
type Verdict uint8

const (
	// Emit: the entry answers its input.
	Emit Verdict = iota
	// Fail: the entry is the error that fails its input. The caller drops
	// what the input emitted so far and reports the input as failed.
	Fail
	// Skip: the entry belongs to an input that already failed.
	Skip
)

// Reset starts reading an answer whose inputs unit names in errors
// ("input", "record", "group", "timer").
func (a *Answer) Reset(unit string) { a.unit, a.last, a.failed = unit, -1, false }

// Next classifies entry e. first says that e is its input's first entry,
// where the caller marks the start of the input's outputs. An entry for an
// input before the current one breaks the ABI's order: the caller reports
// the error as bad output.
func (a *Answer) Next(e *abi.Entry) (first bool, v Verdict, err error) {
	i := int(e.Index)
	if i < a.last {
		return false, Skip, fmt.Errorf("entry for %s %d after %s %d", a.unit, i, a.unit, a.last)
	}
	if i != a.last {
		a.last, a.failed, first = i, false, true
	}
	switch {
	case a.failed:
		return first, Skip, nil
	case e.Tag == abi.TagError:
		a.failed = true
		return first, Fail, nil
	}
	return first, Emit, nil
}

// FailInput marks the input of the entry read last as failed, for an entry
// the caller refuses (a side output the operator does not declare): its
// later entries are skipped as after an error entry.
func (a *Answer) FailInput() { a.failed = true }
