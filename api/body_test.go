package api

import (
	"errors"
	"net/http/httptest"
	"testing"
)

// failingReader is a request body whose read fails.
type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

// TestUnreadableBody: a body that cannot be read is 400 invalid-request,
// its detail prefixed with what was being read.
func TestUnreadableBody(t *testing.T) {
	mods, jobs := fixtures()
	h := New(Config{Modules: mods, Jobs: jobs, Logger: testLogger(t)})
	req := httptest.NewRequest("POST", "/v1/jobs", failingReader{})
	req.Header.Set("Content-Type", "application/yaml")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	response{status: 400, header: map[string]string{"Content-Type": problemType},
		body: `{"type":"https://wasmstream.io/problems/invalid-request","title":"Invalid request","status":400,"detail":"read the job spec: connection reset"}`}.check(t, rec)
	if len(jobs.submitted) != 0 {
		t.Fatalf("submitted %q", jobs.submitted)
	}
}
