package api

import (
	"errors"
	"net/http"

	"wasmstream.io/platform/runtime"
	"wasmstream.io/platform/runtime/spec"
)

// moduleProblems is implemented by the host's module validation error.
type moduleProblems interface {
	ValidationProblems() []string
}

// fail writes the problem err stands for. An error the API does not know is
// logged with the request id and answered with a generic 500.
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var specErr *spec.Error
	var jobErr *runtime.JobError
	var modErr moduleProblems
	switch {
	case errors.As(err, &specErr) && len(specErr.Problems) > 0:
		writeProblem(w, invalidSpec.listed("invalid job spec: ", fieldProblems(specErr.Problems)))
	case errors.As(err, &modErr) && len(modErr.ValidationProblems()) > 0:
		msgs := modErr.ValidationProblems()
		problems := make([]fieldProblem, len(msgs))
		for i, m := range msgs {
			problems[i] = fieldProblem{Message: m}
		}
		writeProblem(w, invalidModule.listed("invalid module: ", problems))
	case errors.As(err, &jobErr) && len(jobErr.Problems) > 0:
		writeProblem(w, invalidJob.listed("invalid job: ", fieldProblems(jobErr.Problems)))
	case errors.Is(err, runtime.ErrInvalidJob):
		writeProblem(w, invalidJob.problem(err.Error()))
	case errors.Is(err, runtime.ErrNotFound):
		writeProblem(w, notFound.problem(err.Error()))
	case errors.Is(err, runtime.ErrInUse):
		writeProblem(w, moduleInUse.problem(err.Error()))
	case errors.Is(err, runtime.ErrFinished):
		writeProblem(w, jobFinished.problem(err.Error()))
	case errors.Is(err, runtime.ErrNotEnded):
		writeProblem(w, jobNotEnded.problem(err.Error()))
	case errors.Is(err, runtime.ErrSavepointInUse):
		writeProblem(w, savepointInUse.problem(err.Error()))
	case errors.Is(err, runtime.ErrInvalidModuleName):
		writeProblem(w, invalidRequest.problem(err.Error()))
	case r.Context().Err() != nil && errors.Is(err, r.Context().Err()):
		// The request's deadline passed (or its client left) while the
		// platform worked on it.
		timedOut(w, r, r.Context().Err())
	default:
		s.internal(w, r, "error", err)
	}
}

// fieldProblems are a spec's or a job's problems as the API lists them.
func fieldProblems(list []spec.FieldError) []fieldProblem {
	problems := make([]fieldProblem, len(list))
	for i, p := range list {
		problems[i] = fieldProblem{Field: p.Path, Message: p.Message, Line: p.Line}
	}
	return problems
}

// internal logs what went wrong and answers 500 without the details.
func (s *server) internal(w http.ResponseWriter, r *http.Request, args ...any) {
	id := requestID(r.Context())
	s.log.ErrorContext(r.Context(), "internal error", append([]any{"request_id", id}, args...)...)
	writeProblem(w, internalError.problem("internal error (request id "+id+")"))
}
