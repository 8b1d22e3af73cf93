package api

import (
	"context"
	"fmt"
	"testing"

	"wasmstream.io/platform/runtime"
)

// parkedKey is the key the fake jobs have parked, in every job that runs.
var parkedKey = runtime.QuarantinedKey{Operator: "per_user", Subtask: 1, Key: "bad", Failures: 3, FirstError: "udf[m] function[f]: rejected",
	Parked: 5, Kept: 5, Bytes: 420}

func (f *fakeJobs) Quarantined(_ context.Context, id string) ([]runtime.QuarantinedKey, error) {
	j, ok := f.jobs[id]
	switch {
	case !ok:
		return nil, fmt.Errorf("job %s: %w", id, runtime.ErrNotFound)
	case j.State.Terminal():
		return nil, fmt.Errorf("job %s: %w", id, runtime.ErrFinished)
	}
	return []runtime.QuarantinedKey{parkedKey}, nil
}

func (f *fakeJobs) ReleaseQuarantined(ctx context.Context, id, key string) ([]runtime.QuarantinedKey, error) {
	if _, err := f.Quarantined(ctx, id); err != nil {
		return nil, err
	}
	if key != parkedKey.Key {
		return nil, fmt.Errorf("job %s: key %q is not quarantined: %w", id, key, runtime.ErrNotFound)
	}
	return []runtime.QuarantinedKey{parkedKey}, nil
}

func TestQuarantineRoutes(t *testing.T) {
	tests := []struct {
		name string
		req  request
		want response
	}{{
		name: "list",
		req:  request{method: "GET", target: "/v1/jobs/job-1/quarantine"},
		want: response{status: 200, header: map[string]string{"Content-Type": jsonType},
			body: `{"keys":[{"operator":"per_user","subtask":1,"key":"bad","failures":3,"first_error":"udf[m] function[f]: rejected","parked":5,"kept":5,"overflow":0,"bytes":420}]}`},
	}, {
		name: "list of an ended job",
		req:  request{method: "GET", target: "/v1/jobs/job-2/quarantine"},
		want: response{status: 409, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/job-finished","title":"Job already finished","status":409,"detail":"job job-2: job already finished"}`},
	}, {
		name: "list of a missing job",
		req:  request{method: "GET", target: "/v1/jobs/job-9/quarantine"},
		want: response{status: 404, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/not-found","title":"Not found","status":404,"detail":"job job-9: not found"}`},
	}, {
		name: "release",
		req:  request{method: "POST", target: "/v1/jobs/job-1/quarantine/bad/release"},
		want: response{status: 202, header: map[string]string{"Content-Type": jsonType},
			body: `{"key":"bad","released":[{"operator":"per_user","subtask":1,"key":"bad","failures":3,"first_error":"udf[m] function[f]: rejected","parked":5,"kept":5,"overflow":0,"bytes":420}]}`},
	}, {
		name: "release of an escaped key that is not parked",
		req:  request{method: "POST", target: "/v1/jobs/job-1/quarantine/a%2Fb/release"},
		want: response{status: 404, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/not-found","title":"Not found","status":404,"detail":"job job-1: key \"a/b\" is not quarantined: not found"}`},
	}, {
		name: "release with GET",
		req:  request{method: "GET", target: "/v1/jobs/job-1/quarantine/bad/release"},
		want: response{status: 405, header: map[string]string{"Content-Type": problemType, "Allow": "POST"},
			body: `{"type":"about:blank","title":"Method Not Allowed","status":405,"detail":"GET is not allowed on /v1/jobs/job-1/quarantine/bad/release; allowed: POST"}`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mods, jobs := fixtures()
			h := New(Config{Modules: mods, Jobs: jobs, Logger: testLogger(t)})
			tt.want.check(t, tt.req.do(h))
		})
	}
}

func (s scripted) Quarantined(_ context.Context, id string) ([]runtime.QuarantinedKey, error) {
	return nil, s.answer(id)
}

func (s scripted) ReleaseQuarantined(_ context.Context, id, key string) ([]runtime.QuarantinedKey, error) {
	if err := s.answer(id); err != nil {
		return nil, err
	}
	if key != parkedKey.Key {
		return nil, fmt.Errorf("key %q: %w", key, runtime.ErrNotFound)
	}
	return []runtime.QuarantinedKey{parkedKey}, nil
}
