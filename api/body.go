package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// mediaTypeOK checks the request's Content-Type against allowed; an absent
// Content-Type passes when allowed holds "". It writes the 415 itself.
func mediaTypeOK(w http.ResponseWriter, r *http.Request, allowed ...string) bool {
	mt := ""
	if ct := r.Header.Get("Content-Type"); ct != "" {
		parsed, _, err := mime.ParseMediaType(ct)
		if err != nil {
			parsed = ct
		}
		mt = parsed
	}
	for _, a := range allowed {
		if mt == a {
			return true
		}
	}
	named := make([]string, 0, len(allowed))
	for _, a := range allowed {
		if a != "" {
			named = append(named, a)
		}
	}
	got := mt
	if got == "" {
		got = "none"
	}
	writeProblem(w, unsupportedMediaType.problem(
		fmt.Sprintf("Content-Type must be one of %s; got %s", strings.Join(named, ", "), got)))
	return false
}

// readBody reads a body of at most limit bytes; what names it in problems.
// It writes the problem itself when the body is too large or unreadable.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, what string) ([]byte, bool) {
	if r.ContentLength > limit {
		tooLarge(w, limit, what)
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		tooLarge(w, limit, what)
		return nil, false
	case isTimeout(err):
		bodyTimedOut(w, what)
		return nil, false
	case err != nil:
		writeProblem(w, invalidRequest.problem("read the "+what+": "+err.Error()))
		return nil, false
	case len(body) == 0:
		writeProblem(w, invalidRequest.problem("empty body: send the "+what))
		return nil, false
	}
	return body, true
}

func tooLarge(w http.ResponseWriter, limit int64, what string) {
	p := bodyTooLarge.problem(what + " exceeds the limit of " + byteSize(limit))
	p.Limit = limit
	writeProblem(w, p)
}

// byteSize writes n in the largest binary unit that divides it.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n == 1:
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// writeJSON answers with v as JSON.
func (s *server) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		s.internal(w, r, "error", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
