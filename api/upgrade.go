package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"wasmstream.io/platform/runtime"
)

// Operations are the live operations on a running job: a new version of
// its module or spec, and a new parallelism, each switched to in place at
// a checkpoint's barrier. The Jobs of Config serve them when they
// implement it (runtime.Manager does); otherwise the routes answer 409.
type Operations interface {
	UpgradeJob(ctx context.Context, id string, req runtime.UpgradeRequest) (runtime.SwitchInfo, error)
	RescaleJob(ctx context.Context, id string, req runtime.RescaleRequest) (runtime.SwitchInfo, error)
	PromoteJob(ctx context.Context, id string, req runtime.PromoteRequest) (runtime.SwitchInfo, error)
	RollbackJob(ctx context.Context, id string) (runtime.SwitchInfo, error)
}

// operations are the server's live operations, nil when Jobs lacks them.
func (s *server) operations() Operations {
	ops, _ := s.jobs.(Operations)
	return ops
}

func (s *server) upgradeJob(w http.ResponseWriter, r *http.Request) {
	var req runtime.UpgradeRequest
	if !s.readOperation(w, r, &req) {
		return
	}
	s.answerSwitch(w, r, func(ops Operations) (runtime.SwitchInfo, error) {
		return ops.UpgradeJob(r.Context(), r.PathValue("id"), req)
	})
}

func (s *server) rescaleJob(w http.ResponseWriter, r *http.Request) {
	var req runtime.RescaleRequest
	if !s.readOperation(w, r, &req) {
		return
	}
	s.answerSwitch(w, r, func(ops Operations) (runtime.SwitchInfo, error) {
		return ops.RescaleJob(r.Context(), r.PathValue("id"), req)
	})
}

// promoteJob switches a job's canary version to every key group; the
// body, optional, gives the promotion's probation.
func (s *server) promoteJob(w http.ResponseWriter, r *http.Request) {
	var req runtime.PromoteRequest
	if r.ContentLength != 0 && !s.readOperation(w, r, &req) {
		return
	}
	s.answerSwitch(w, r, func(ops Operations) (runtime.SwitchInfo, error) {
		return ops.PromoteJob(r.Context(), r.PathValue("id"), req)
	})
}

// rollbackJob switches every key group of a job running a canary back to
// the job's own version.
func (s *server) rollbackJob(w http.ResponseWriter, r *http.Request) {
	s.answerSwitch(w, r, func(ops Operations) (runtime.SwitchInfo, error) {
		return ops.RollbackJob(r.Context(), r.PathValue("id"))
	})
}

// readOperation decodes a JSON request body into req; an unknown field or
// malformed JSON is a 400 that says so.
func (s *server) readOperation(w http.ResponseWriter, r *http.Request, req any) bool {
	if !mediaTypeOK(w, r, "", "application/json") {
		return false
	}
	body, ok := readBody(w, r, s.maxSpec, "request")
	if !ok {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(req); err != nil {
		writeProblem(w, invalidRequest.listed("", []fieldProblem{{Field: "body", Message: err.Error()}}))
		return false
	}
	return true
}

// answerSwitch runs an operation and answers 202 with the switch begun.
func (s *server) answerSwitch(w http.ResponseWriter, r *http.Request, op func(Operations) (runtime.SwitchInfo, error)) {
	ops := s.operations()
	if ops == nil || s.checkpoints == nil {
		writeProblem(w, noCheckpoints.problem("this platform keeps no checkpoints, which live operations switch at"))
		return
	}
	info, err := op(ops)
	switch {
	case errors.Is(err, runtime.ErrSwitchInProgress):
		writeProblem(w, switchInProgress.problem(err.Error()))
		return
	case errors.Is(err, runtime.ErrNoCanary):
		writeProblem(w, noCanary.problem(err.Error()))
		return
	case err != nil:
		s.failCheckpoint(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/jobs/"+url.PathEscape(info.Job))
	s.writeJSON(w, r, http.StatusAccepted, info)
}
