package api

import (
	"net/http"

	"wasmstream.io/platform/runtime/exec"
)

// exceptions is the body of GET /v1/jobs/{id}/exceptions.
type exceptions struct {
	// Exceptions are newest first, at most exec.MaxExceptions.
	Exceptions []exec.Exception `json:"exceptions"`
}

func (s *server) jobExceptions(w http.ResponseWriter, r *http.Request) {
	info, err := s.jobs.GetJob(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	list := info.Exceptions
	if list == nil {
		list = []exec.Exception{}
	}
	s.writeJSON(w, r, http.StatusOK, exceptions{list})
}
