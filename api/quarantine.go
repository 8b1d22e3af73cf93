package api

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"wasmstream.io/platform/runtime"
)

// Quarantines lists and releases the poison keys of jobs under
// on_udf_error: quarantine. The Jobs a server is given may implement it;
// without it every job has none.
type Quarantines interface {
	Quarantined(ctx context.Context, job string) ([]runtime.QuarantinedKey, error)
	ReleaseQuarantined(ctx context.Context, job, key string) ([]runtime.QuarantinedKey, error)
}

// quarantined is the body of GET /v1/jobs/{id}/quarantine.
type quarantined struct {
	Keys []runtime.QuarantinedKey `json:"keys"`
}

// released is the body of POST /v1/jobs/{id}/quarantine/{key}/release.
type released struct {
	Key       string `json:"key"`
	KeyBase64 string `json:"key_base64"`
	// Released are the operator subtasks that parked the key, as they
	// were when asked: each replays its kept records at its next batch,
	// watermark or tick.
	Released []runtime.QuarantinedKey `json:"released"`
}

func (s *server) listQuarantine(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	q, ok := s.jobs.(Quarantines)
	if !ok {
		if _, err := s.jobs.GetJob(r.Context(), id); err != nil {
			s.fail(w, r, err)
			return
		}
		s.writeJSON(w, r, http.StatusOK, quarantined{Keys: []runtime.QuarantinedKey{}})
		return
	}
	keys, err := q.Quarantined(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if keys == nil {
		keys = []runtime.QuarantinedKey{}
	}
	s.writeJSON(w, r, http.StatusOK, quarantined{Keys: keys})
}

func (s *server) releaseQuarantine(w http.ResponseWriter, r *http.Request) {
	id, key := r.PathValue("id"), r.PathValue("key")
	switch enc := r.URL.Query().Get("key_encoding"); enc {
	case "":
	case "base64url":
		// Padded or not: the list gives it unpadded.
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(key, "="))
		if err != nil {
			writeProblem(w, invalidRequest.listed("", []fieldProblem{{Field: "key", Message: fmt.Sprintf("%q is not base64url (key_encoding=base64url): %v", key, err)}}))
			return
		}
		key = string(raw)
	default:
		writeProblem(w, invalidRequest.listed("", []fieldProblem{{Field: "key_encoding", Message: fmt.Sprintf("%q: want base64url, or none for a key given as text", enc)}}))
		return
	}
	q, ok := s.jobs.(Quarantines)
	if !ok {
		s.fail(w, r, fmt.Errorf("job %s: key %q is not quarantined: %w", id, key, runtime.ErrNotFound))
		return
	}
	list, err := q.ReleaseQuarantined(r.Context(), id, key)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusAccepted, released{Key: key, KeyBase64: base64.RawURLEncoding.EncodeToString([]byte(key)), Released: list})
}
