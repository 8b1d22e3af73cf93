package api

import (
	"net/http"
	"strconv"
)

// getJobSpec answers with the spec a job was submitted with, unchanged.
func (s *server) getJobSpec(w http.ResponseWriter, r *http.Request) {
	data, contentType, err := s.jobs.JobSpec(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

// deleteJob removes a job that has ended with its checkpoints; with
// savepoints=true its savepoints too.
func (s *server) deleteJob(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	savepoints := false
	if q.Has("savepoints") {
		switch q.Get("savepoints") {
		case "true":
			savepoints = true
		case "false":
		default:
			writeProblem(w, invalidRequest.listed("", []fieldProblem{{Field: "savepoints", Message: "want true or false, got " + strconv.Quote(q.Get("savepoints"))}}))
			return
		}
	}
	if err := s.jobs.DeleteJob(r.Context(), r.PathValue("id"), savepoints); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
