package api

import (
	"context"
	"fmt"
	"testing"

	"wasmstream.io/platform/runtime"
)

// parkedKey is the key the fake jobs have parked, in every job that runs.
var parkedKey = runtime.QuarantinedKey{Operator: "per_user", Subtask: 1, Key: "bad", KeyBase64: "YmFk", Failures: 3, FirstError: "udf[m] function[f]: rejected",
	Parked: 5, Kept: 5, Bytes: 420}

// binaryKey is a parked key that is not UTF-8 text: 0xff, "k", 0x00.
var binaryKey = runtime.QuarantinedKey{Operator: "per_user", Subtask: 0, Key: "\xffk\x00", KeyBase64: "_2sA", Failures: 1, FirstError: "udf[m] function[f]: rejected",
	Parked: 1, Kept: 1, Bytes: 60}

func (f *fakeJobs) Quarantined(_ context.Context, id string) ([]runtime.QuarantinedKey, error) {
	j, ok := f.jobs[id]
	switch {
	case !ok:
		return nil, fmt.Errorf("job %s: %w", id, runtime.ErrNotFound)
	case j.State.Terminal():
		return nil, fmt.Errorf("job %s: %w", id, runtime.ErrFinished)
	}
	return []runtime.QuarantinedKey{binaryKey, parkedKey}, nil
}

func (f *fakeJobs) ReleaseQuarantined(ctx context.Context, id, key string) ([]runtime.QuarantinedKey, error) {
	parked, err := f.Quarantined(ctx, id)
	if err != nil {
		return nil, err
	}
	for _, k := range parked {
		if k.Key == key {
			return []runtime.QuarantinedKey{k}, nil
		}
	}
	return nil, fmt.Errorf("job %s: key %q is not quarantined: %w", id, key, runtime.ErrNotFound)
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
			body: `{"keys":[{"operator":"per_user","subtask":0,"key":"\ufffdk\u0000","key_base64":"_2sA","failures":1,"first_error":"udf[m] function[f]: rejected","parked":1,"kept":1,"overflow":0,"bytes":60},` +
				`{"operator":"per_user","subtask":1,"key":"bad","key_base64":"YmFk","failures":3,"first_error":"udf[m] function[f]: rejected","parked":5,"kept":5,"overflow":0,"bytes":420}]}`},
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
			body: `{"key":"bad","key_base64":"YmFk","released":[{"operator":"per_user","subtask":1,"key":"bad","key_base64":"YmFk","failures":3,"first_error":"udf[m] function[f]: rejected","parked":5,"kept":5,"overflow":0,"bytes":420}]}`},
	}, {
		name: "release of a binary key in base64url",
		req:  request{method: "POST", target: "/v1/jobs/job-1/quarantine/_2sA/release?key_encoding=base64url"},
		want: response{status: 202, header: map[string]string{"Content-Type": jsonType},
			body: `{"key":"\ufffdk\u0000","key_base64":"_2sA","released":[{"operator":"per_user","subtask":0,"key":"\ufffdk\u0000","key_base64":"_2sA","failures":1,"first_error":"udf[m] function[f]: rejected","parked":1,"kept":1,"overflow":0,"bytes":60}]}`},
	}, {
		name: "release of a text key in padded base64url",
		req:  request{method: "POST", target: "/v1/jobs/job-1/quarantine/YmFk%3D/release?key_encoding=base64url"},
		want: response{status: 202, header: map[string]string{"Content-Type": jsonType},
			body: `{"key":"bad","key_base64":"YmFk","released":[{"operator":"per_user","subtask":1,"key":"bad","key_base64":"YmFk","failures":3,"first_error":"udf[m] function[f]: rejected","parked":5,"kept":5,"overflow":0,"bytes":420}]}`},
	}, {
		name: "release of the binary key's text, which is not the key",
		req:  request{method: "POST", target: "/v1/jobs/job-1/quarantine/%EF%BF%BDk%00/release"},
		want: response{status: 404, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/not-found","title":"Not found","status":404,"detail":"job job-1: key \"�k\\x00\" is not quarantined: not found"}`},
	}, {
		name: "release with a key that is not base64url",
		req:  request{method: "POST", target: "/v1/jobs/job-1/quarantine/a+b/release?key_encoding=base64url"},
		want: response{status: 400, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/invalid-request","title":"Invalid request","status":400,"detail":"key: \"a+b\" is not base64url (key_encoding=base64url): illegal base64 data at input byte 1","problems":[{"field":"key","message":"\"a+b\" is not base64url (key_encoding=base64url): illegal base64 data at input byte 1"}]}`},
	}, {
		name: "release with an unknown key encoding",
		req:  request{method: "POST", target: "/v1/jobs/job-1/quarantine/bad/release?key_encoding=hex"},
		want: response{status: 400, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/invalid-request","title":"Invalid request","status":400,"detail":"key_encoding: \"hex\": want base64url, or none for a key given as text","problems":[{"field":"key_encoding","message":"\"hex\": want base64url, or none for a key given as text"}]}`},
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
