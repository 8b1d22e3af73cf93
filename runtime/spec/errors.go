package spec

import (
	"fmt"
	"strings"
)

// FieldError is one problem with a job spec.
type FieldError struct {
	// Path names the field, like "operators[1].window.size"; empty for the
	// spec as a whole.
	Path    string
	Message string
	// Line is the spec's line the problem is on, or nearest to; 0 when
	// no line helps.
	Line int
}

// Error renders "<path>: <message>", with " (line N)" when the line is known.
func (e FieldError) Error() string {
	s := e.Message
	if e.Path != "" {
		s = e.Path + ": " + s
	}
	if e.Line > 0 {
		s += fmt.Sprintf(" (line %d)", e.Line)
	}
	return s
}

// Error lists every problem Parse found in a job spec.
type Error struct {
	Problems []FieldError
}

// Error joins the problems with "; ".
func (e *Error) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Error()
	}
	return strings.Join(msgs, "; ")
}
