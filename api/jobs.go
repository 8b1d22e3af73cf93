package api

import (
	"net/http"
	"net/url"

	"wasmstream.io/platform/runtime"
)

// submitJob starts the job the body's JSON or YAML spec declares.
func (s *server) submitJob(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Has("from_savepoint") {
		writeProblem(w, invalidRequest.listed("", []fieldProblem{
			{Field: "from_savepoint", Message: "savepoints are not supported yet"},
		}))
		return
	}
	if !mediaTypeOK(w, r, "", "application/json", "application/yaml", "application/x-yaml", "text/yaml") {
		return
	}
	spec, ok := readBody(w, r, s.maxSpec, "job spec")
	if !ok {
		return
	}
	info, err := s.jobs.SubmitJob(r.Context(), spec)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/jobs/"+url.PathEscape(info.ID))
	s.writeJSON(w, r, http.StatusCreated, struct {
		ID    string           `json:"id"`
		State runtime.JobState `json:"state"`
	}{info.ID, info.State})
}

func (s *server) listJobs(w http.ResponseWriter, r *http.Request) {
	jobs, err := s.jobs.ListJobs(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if jobs == nil {
		jobs = []runtime.JobInfo{}
	}
	s.writeJSON(w, r, http.StatusOK, struct {
		Jobs []runtime.JobInfo `json:"jobs"`
	}{jobs})
}

func (s *server) getJob(w http.ResponseWriter, r *http.Request) {
	info, err := s.jobs.GetJob(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, info)
}

func (s *server) cancelJob(w http.ResponseWriter, r *http.Request) {
	info, err := s.jobs.CancelJob(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, info)
}
