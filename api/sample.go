package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"wasmstream.io/platform/runtime"
)

// Samples shows the last records a job's sink wrote. The Jobs of Config
// may implement it; without it GET /v1/jobs/{id}/sample answers 404.
type Samples interface {
	Sample(ctx context.Context, job, sink string, n int) (runtime.Sample, error)
}

// defaultSampleSize is the records of a sample without n.
const defaultSampleSize = 20

// sample answers GET /v1/jobs/{id}/sample?sink=ID&n=20.
func (s *server) sample(w http.ResponseWriter, r *http.Request) {
	samples, ok := s.jobs.(Samples)
	if !ok {
		writeProblem(w, notFound.problem("this platform keeps no samples"))
		return
	}
	n := defaultSampleSize
	if q := r.URL.Query().Get("n"); q != "" {
		v, err := strconv.Atoi(q)
		if err != nil || v < 1 || v > runtime.MaxSample {
			writeProblem(w, invalidRequest.listed("", []fieldProblem{
				{Field: "n", Message: "must be a number from 1 to " + strconv.Itoa(runtime.MaxSample) + ", got " + strconv.Quote(q)},
			}))
			return
		}
		n = v
	}
	out, err := samples.Sample(r.Context(), r.PathValue("id"), r.URL.Query().Get("sink"), n)
	if errors.Is(err, runtime.ErrBadSample) {
		writeProblem(w, invalidRequest.listed("", []fieldProblem{{Field: "sink", Message: err.Error()}}))
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, out)
}
