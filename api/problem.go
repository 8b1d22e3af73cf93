package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// problem is an RFC 9457 problem details object.
type problem struct {
	Type     string         `json:"type"`
	Title    string         `json:"title"`
	Status   int            `json:"status"`
	Detail   string         `json:"detail,omitempty"`
	Problems []fieldProblem `json:"problems,omitempty"`
	// Limit is the byte limit a too large body exceeded.
	Limit int64 `json:"limit,omitempty"`
}

// fieldProblem is one thing wrong with a request: the path of the offending
// field when there is one, and the spec's line when it is known.
type fieldProblem struct {
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
}

// String is "<field>: <message> (line N)", leaving out what is unknown.
func (p fieldProblem) String() string {
	s := p.Message
	if p.Field != "" {
		s = p.Field + ": " + s
	}
	if p.Line > 0 {
		s += fmt.Sprintf(" (line %d)", p.Line)
	}
	return s
}

// problem is a problem of kind k with detail.
func (k kind) problem(detail string) problem {
	t := catalogue[k]
	return problem{Type: t.typ, Title: t.title, Status: t.status, Detail: detail}
}

// listed is a problem of kind k whose detail is prefix followed by the
// listed problems.
func (k kind) listed(prefix string, problems []fieldProblem) problem {
	parts := make([]string, len(problems))
	for i, p := range problems {
		parts[i] = p.String()
	}
	p := k.problem(prefix + strings.Join(parts, "; "))
	p.Problems = problems
	return p
}

func writeProblem(w http.ResponseWriter, p problem) {
	// A problem holds only strings and integers: Marshal cannot fail.
	body, _ := json.Marshal(p)
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	_, _ = w.Write(append(body, '\n'))
}
