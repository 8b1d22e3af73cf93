package api

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/runtime"
)

// fakeCheckpoints has a history for job-1; job-2 takes no checkpoints and
// job-3 is not running.
type fakeCheckpoints struct{}

func (fakeCheckpoints) SubmitJobFromSavepoint(context.Context, []byte, string, bool) (runtime.JobInfo, error) {
	return runtime.JobInfo{}, fmt.Errorf("from_savepoint: %w", runtime.ErrInvalidJob)
}

func (fakeCheckpoints) Checkpoints(_ context.Context, job string) ([]checkpoint.Stats, error) {
	switch job {
	case "job-1":
		failure := &checkpoint.FailureError{Reason: checkpoint.ReasonExpired, Checkpoint: 2, Err: fmt.Errorf("not complete after the timeout of 1m0s")}
		return []checkpoint.Stats{
			{ID: 1, Kind: checkpoint.KindCheckpoint, Status: checkpoint.StatusCompleted, Triggered: t0, Duration: time.Millisecond, Size: 10},
			{ID: 2, Kind: checkpoint.KindCheckpoint, Status: checkpoint.StatusFailed, Triggered: t0, Duration: time.Minute,
				Failure: failure.Error(), FailureReason: failure.Reason},
		}, nil
	case "job-2", "job-3":
		return nil, nil
	}
	return nil, fmt.Errorf("job %s: %w", job, runtime.ErrNotFound)
}

func (f fakeCheckpoints) TriggerSavepoint(_ context.Context, job string) (runtime.SavepointInfo, error) {
	switch job {
	case "job-2":
		return runtime.SavepointInfo{}, fmt.Errorf("job %s: %w", job, runtime.ErrNoCheckpoints)
	case "job-3":
		return runtime.SavepointInfo{}, fmt.Errorf("job %s: savepoint: %w", job, runtime.ErrNotRunning)
	}
	return runtime.SavepointInfo{}, fmt.Errorf("job %s: %w", job, runtime.ErrNotFound)
}

func (fakeCheckpoints) Savepoints(context.Context, string) ([]runtime.SavepointInfo, error) {
	return nil, nil
}

// DeleteSavepoint deletes job-1-1; job-1-2 is in use.
func (fakeCheckpoints) DeleteSavepoint(_ context.Context, job, savepoint string) error {
	switch {
	case job == "job-2":
		return fmt.Errorf("job %s: %w", job, runtime.ErrNoCheckpoints)
	case job == "job-1" && savepoint == "job-1-1":
		return nil
	case job == "job-1" && savepoint == "job-1-2":
		return fmt.Errorf("savepoint %s: jobs job-9 started from it and have not ended: %w", savepoint, runtime.ErrSavepointInUse)
	}
	return fmt.Errorf("savepoint %s of job %s: %w", savepoint, job, runtime.ErrNotFound)
}

func (f fakeCheckpoints) StopJob(ctx context.Context, job string) (runtime.SavepointInfo, error) {
	return f.TriggerSavepoint(ctx, job)
}

// TestCheckpointRoutes: the history shows why a checkpoint failed, as words
// and as a reason; a job without checkpoints, or not running, is 409
// no-checkpoints.
func TestCheckpointRoutes(t *testing.T) {
	tests := []struct {
		name string
		req  request
		want response
	}{{
		name: "history",
		req:  request{method: "GET", target: "/v1/jobs/job-1/checkpoints"},
		want: response{status: 200, header: map[string]string{"Content-Type": jsonType}, body: `{"checkpoints":[` +
			`{"id":1,"kind":"checkpoint","status":"COMPLETED","triggered":"2026-01-02T03:04:05Z","duration_ns":1000000,"size":10,"alignment_ns":0,"in_flight_bytes":0},` +
			`{"id":2,"kind":"checkpoint","status":"FAILED","triggered":"2026-01-02T03:04:05Z","duration_ns":60000000000,"size":0,"alignment_ns":0,"in_flight_bytes":0,` +
			`"failure":"checkpoint 2: expired: not complete after the timeout of 1m0s","failure_reason":"expired"}]}`},
	}, {
		name: "empty history",
		req:  request{method: "GET", target: "/v1/jobs/job-2/checkpoints"},
		want: response{status: 200, body: `{"checkpoints":[]}`},
	}, {
		name: "history of no job",
		req:  request{method: "GET", target: "/v1/jobs/job-9/checkpoints"},
		want: response{status: 404, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/not-found","title":"Not found","status":404,"detail":"job job-9: not found"}`},
	}, {
		name: "savepoint of a job without checkpoints",
		req:  request{method: "POST", target: "/v1/jobs/job-2/savepoints"},
		want: response{status: 409, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/no-checkpoints","title":"Job takes no checkpoints","status":409,` +
				`"detail":"job job-2: the job takes no checkpoints (its spec has no checkpoint block)"}`},
	}, {
		name: "stop a job that is not running",
		req:  request{method: "POST", target: "/v1/jobs/job-3/stop"},
		want: response{status: 409, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/no-checkpoints","title":"Job takes no checkpoints","status":409,` +
				`"detail":"job job-3: savepoint: job is not running"}`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mods, jobs := fixtures()
			h := New(Config{Modules: mods, Jobs: jobs, Checkpoints: fakeCheckpoints{}, Logger: testLogger(t)})
			tt.want.check(t, tt.req.do(h))
		})
	}
}

// TestAPIDocListsFailureReasons: docs/API.md's table of checkpoint failure
// reasons lists exactly the reasons package checkpoint has, in its order.
func TestAPIDocListsFailureReasons(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "API.md"))
	if err != nil {
		t.Fatal(err)
	}
	const header = "| `failure_reason` |"
	doc := string(data)
	start := strings.Index(doc, header)
	if start < 0 {
		t.Fatalf("docs/API.md has no table headed %q", header)
	}
	var got []string
	for _, line := range strings.Split(doc[start:], "\n")[2:] {
		if !strings.HasPrefix(line, "| `") {
			break
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
		got = append(got, name)
	}
	var want []string
	for _, r := range checkpoint.FailureReasons() {
		want = append(want, r.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("docs/API.md lists the failure reasons %q, package checkpoint has %q", got, want)
	}
}
