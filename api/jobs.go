package api

import (
	"net/http"
	"net/url"

	"wasmstream.io/platform/runtime"
)

// submitJob starts the job the body's JSON or YAML spec declares; with
// dry_run=true it only checks it and answers with what would run.
func (s *server) submitJob(w http.ResponseWriter, r *http.Request) {
	from := r.URL.Query().Get("from_savepoint")
	if r.URL.Query().Has("from_savepoint") && (from == "" || s.checkpoints == nil) {
		writeProblem(w, invalidRequest.listed("", []fieldProblem{
			{Field: "from_savepoint", Message: "name a savepoint id (GET /v1/jobs/{id}/savepoints lists them)"},
		}))
		return
	}
	if q := r.URL.Query(); q.Has("from_checkpoint") {
		ref := q.Get("from_checkpoint")
		if ref == "" || s.checkpoints == nil || from != "" {
			writeProblem(w, invalidRequest.listed("", []fieldProblem{
				{Field: "from_checkpoint", Message: "name one retained checkpoint or savepoint, <job>-<id> (GET /v1/jobs/{id}/checkpoints lists them), and no from_savepoint"},
			}))
			return
		}
		from = runtime.FromCheckpoint(ref)
	}
	if !mediaTypeOK(w, r, "", "application/json", "application/yaml", "application/x-yaml", "text/yaml") {
		return
	}
	spec, ok := readBody(w, r, s.maxSpec, "job spec")
	if !ok {
		return
	}
	allow := r.URL.Query().Get("allow_non_restored_state") == "true"
	if r.URL.Query().Get("dry_run") == "true" {
		plan, err := s.jobs.ValidateJob(r.Context(), spec, from, allow)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		s.writeJSON(w, r, http.StatusOK, plan)
		return
	}
	var info runtime.JobInfo
	var err error
	if from != "" {
		info, err = s.checkpoints.SubmitJobFromSavepoint(r.Context(), spec, from, allow)
	} else {
		info, err = s.jobs.SubmitJob(r.Context(), spec)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/jobs/"+url.PathEscape(info.ID))
	s.writeJSON(w, r, http.StatusCreated, submitted{info.ID, info.State, info.Warnings})
}

// submitted is the answer to a submission.
type submitted struct {
	ID       string           `json:"id"`
	State    runtime.JobState `json:"state"`
	Warnings []string         `json:"warnings,omitempty"`
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

func (s *server) backpressure(w http.ResponseWriter, r *http.Request) {
	info, err := s.jobs.Backpressure(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, info)
}
