package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"testing"

	"wasmstream.io/platform/runtime"
)

func (s scripted) Sample(_ context.Context, job, sink string, n int) (runtime.Sample, error) {
	if sink == "nope" {
		return runtime.Sample{}, fmt.Errorf("job %s: %w: no sink %q", job, runtime.ErrBadSample, sink)
	}
	return runtime.Sample{Job: job, Sink: sink, Kind: "print", Records: []runtime.SampleRecord{}}, s.answer(job)
}

// Sample of fakeJobs answers job-1's sink out with n records "k<i> <i>".
func (f *fakeJobs) Sample(_ context.Context, job, sink string, n int) (runtime.Sample, error) {
	if _, ok := f.jobs[job]; !ok {
		return runtime.Sample{}, fmt.Errorf("job %s: %w", job, runtime.ErrNotFound)
	}
	if sink != "" && sink != "out" {
		return runtime.Sample{}, fmt.Errorf("job %s: %w: no sink %q; its sinks are out", job, runtime.ErrBadSample, sink)
	}
	out := runtime.Sample{Job: job, Sink: "out", Kind: "print"}
	for i := range n {
		out.Records = append(out.Records, runtime.SampleRecord{Key: fmt.Sprintf("k%d", i), Value: fmt.Sprint(i), Timestamp: int64(i)})
	}
	return out, nil
}

func TestSample(t *testing.T) {
	mods, jobs := fixtures()
	h := New(Config{Modules: mods, Jobs: jobs, Logger: testLogger(t)})
	tests := []struct {
		target  string
		status  int
		records int
		field   string
	}{
		{"/v1/jobs/job-1/sample", 200, 20, ""},
		{"/v1/jobs/job-1/sample?sink=out&n=3", 200, 3, ""},
		{"/v1/jobs/job-1/sample?n=0", 400, 0, "n"},
		{"/v1/jobs/job-1/sample?n=1001", 400, 0, "n"},
		{"/v1/jobs/job-1/sample?n=x", 400, 0, "n"},
		{"/v1/jobs/job-1/sample?sink=other", 400, 0, "sink"},
		{"/v1/jobs/nope/sample", 404, 0, ""},
	}
	for _, tt := range tests {
		rec := request{method: "GET", target: tt.target}.do(h)
		if rec.Code != tt.status {
			t.Errorf("%s: %d %s, want %d", tt.target, rec.Code, rec.Body, tt.status)
			continue
		}
		switch {
		case tt.status == 200:
			var s runtime.Sample
			if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil || len(s.Records) != tt.records || s.Sink != "out" {
				t.Errorf("%s: %s (%v), want %d records of sink out", tt.target, rec.Body, err, tt.records)
			}
		case tt.field != "":
			var p struct {
				Problems []struct{ Field string } `json:"problems"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || len(p.Problems) != 1 || p.Problems[0].Field != tt.field {
				t.Errorf("%s: %s, want one problem of field %s", tt.target, rec.Body, tt.field)
			}
		}
	}
}

// TestAccessLogLevels: a read that succeeds is logged at DEBUG, any other
// request at INFO.
func TestAccessLogLevels(t *testing.T) {
	tests := []struct {
		method, target string
		status         int
		level          string
	}{
		{"GET", "/v1/jobs", 200, "DEBUG"},
		{"GET", "/v1/jobs/job-1/sample", 200, "DEBUG"},
		{"GET", "/healthz", 200, "DEBUG"},
		{"GET", "/v1/jobs/nope", 404, "INFO"},
		{"POST", "/v1/jobs/job-1/cancel", 200, "INFO"},
		{"DELETE", "/v1/modules/nope", 404, "INFO"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		mods, jobs := fixtures()
		h := New(Config{Modules: mods, Jobs: jobs, Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		if rec := (request{method: tt.method, target: tt.target}).do(h); rec.Code != tt.status {
			t.Fatalf("%s %s: %d, want %d", tt.method, tt.target, rec.Code, tt.status)
		}
		var found bool
		for _, line := range logLines(t, &buf) {
			if line["msg"] == "request" {
				found = true
				checkLog(t, line, map[string]any{"level": tt.level, "method": tt.method, "path": tt.target, "status": float64(tt.status)})
			}
		}
		if !found {
			t.Errorf("%s %s: no request line", tt.method, tt.target)
		}
	}
	// At the default level, the successful read leaves no line.
	var buf bytes.Buffer
	mods, jobs := fixtures()
	h := New(Config{Modules: mods, Jobs: jobs, Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	if rec := (request{method: http.MethodGet, target: "/v1/jobs"}).do(h); rec.Code != 200 || buf.Len() != 0 {
		t.Errorf("GET /v1/jobs at level INFO: %d, logged %q; want 200 and nothing", rec.Code, buf.String())
	}
}
