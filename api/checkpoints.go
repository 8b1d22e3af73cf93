package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/runtime"
)

// Checkpoints serves a job's checkpoints and savepoints.
type Checkpoints interface {
	// SubmitJobFromSavepoint starts a job restoring a savepoint.
	SubmitJobFromSavepoint(ctx context.Context, spec []byte, savepoint string, allowNonRestored bool) (runtime.JobInfo, error)
	Checkpoints(ctx context.Context, job string) ([]checkpoint.Stats, error)
	TriggerSavepoint(ctx context.Context, job string) (runtime.SavepointInfo, error)
	Savepoints(ctx context.Context, job string) ([]runtime.SavepointInfo, error)
	StopJob(ctx context.Context, job string) (runtime.SavepointInfo, error)
	// DeleteSavepoint disposes of one of a job's savepoints.
	DeleteSavepoint(ctx context.Context, job, savepoint string) error
}

// failCheckpoint answers a checkpoint error: 409 for a job without
// checkpoints or not running (and, from fail, for a savepoint in use).
func (s *server) failCheckpoint(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, runtime.ErrNoCheckpoints) || errors.Is(err, runtime.ErrNotRunning) {
		writeProblem(w, noCheckpoints.problem(err.Error()))
		return
	}
	s.fail(w, r, err)
}

func (s *server) listCheckpoints(w http.ResponseWriter, r *http.Request) {
	list, err := s.checkpoints.Checkpoints(r.Context(), r.PathValue("id"))
	if err != nil {
		s.failCheckpoint(w, r, err)
		return
	}
	if list == nil {
		list = []checkpoint.Stats{}
	}
	s.writeJSON(w, r, http.StatusOK, struct {
		Checkpoints []checkpoint.Stats `json:"checkpoints"`
	}{list})
}

func (s *server) triggerSavepoint(w http.ResponseWriter, r *http.Request) {
	sp, err := s.checkpoints.TriggerSavepoint(r.Context(), r.PathValue("id"))
	if err != nil {
		s.failCheckpoint(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/jobs/"+url.PathEscape(r.PathValue("id"))+"/savepoints")
	s.writeJSON(w, r, http.StatusAccepted, sp)
}

func (s *server) listSavepoints(w http.ResponseWriter, r *http.Request) {
	list, err := s.checkpoints.Savepoints(r.Context(), r.PathValue("id"))
	if err != nil {
		s.failCheckpoint(w, r, err)
		return
	}
	if list == nil {
		list = []runtime.SavepointInfo{}
	}
	s.writeJSON(w, r, http.StatusOK, struct {
		Savepoints []runtime.SavepointInfo `json:"savepoints"`
	}{list})
}

func (s *server) stopJob(w http.ResponseWriter, r *http.Request) {
	sp, err := s.checkpoints.StopJob(r.Context(), r.PathValue("id"))
	if err != nil {
		s.failCheckpoint(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusAccepted, sp)
}

func (s *server) deleteSavepoint(w http.ResponseWriter, r *http.Request) {
	if err := s.checkpoints.DeleteSavepoint(r.Context(), r.PathValue("id"), r.PathValue("savepoint")); err != nil {
		s.failCheckpoint(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
