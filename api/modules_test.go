package api

import (
	"slices"
	"testing"
)

const wasm8 = "\x00asm\x01\x00\x00\x00"

func TestModules(t *testing.T) {
	uploaded := `{"id":"sha256:0061736d01000000","size":8,"functions":[{"name":"parse","kind":"map"}],"uploaded":"2026-01-02T03:04:05Z"}`
	tests := []struct {
		name string
		// uploadErr is what UploadModule fails with.
		uploadErr error
		req       request
		want      response
		// wantUploaded is what reached UploadModule or UploadNamedModule,
		// wantNamed the names the latter got.
		wantUploaded, wantNamed []string
	}{{
		name: "upload wasm",
		req:  request{method: "POST", target: "/v1/modules", body: wasm8, header: map[string]string{"Content-Type": "application/wasm"}},
		want: response{status: 201, body: uploaded, header: map[string]string{
			"Content-Type": jsonType, "Location": "/v1/modules/sha256:0061736d01000000"}},
		wantUploaded: []string{wasm8},
	}, {
		name: "upload octet-stream ignores a client-supplied id",
		req:  request{method: "POST", target: "/v1/modules?id=sha256:00ff", body: wasm8, header: map[string]string{"Content-Type": "application/octet-stream"}},
		want: response{status: 201, body: uploaded, header: map[string]string{
			"Content-Type": jsonType, "Location": "/v1/modules/sha256:0061736d01000000"}},
		wantUploaded: []string{wasm8},
	}, {
		name: "upload with a name",
		req:  request{method: "POST", target: "/v1/modules?name=words", body: wasm8, header: map[string]string{"Content-Type": "application/wasm"}},
		want: response{status: 201, body: `{"id":"sha256:0061736d01000000","names":["words@1"],"version":"words@1","size":8,"functions":[{"name":"parse","kind":"map"}],"uploaded":"2026-01-02T03:04:05Z"}`,
			header: map[string]string{"Content-Type": jsonType, "Location": "/v1/modules/sha256:0061736d01000000"}},
		wantUploaded: []string{wasm8},
		wantNamed:    []string{"words"},
	}, {
		name: "upload with a bad name",
		req:  request{method: "POST", target: "/v1/modules?name=My.Words", body: wasm8, header: map[string]string{"Content-Type": "application/wasm"}},
		want: response{status: 400, header: map[string]string{"Content-Type": problemType, "Location": ""},
			body: `{"type":"https://wasmstream.io/problems/invalid-request","title":"Invalid request","status":400,` +
				`"detail":"name: invalid module name \"My.Words\": want a lowercase letter or digit, then at most 62 lowercase letters, digits, '_' or '-'",` +
				`"problems":[{"field":"name","message":"invalid module name \"My.Words\": want a lowercase letter or digit, then at most 62 lowercase letters, digits, '_' or '-'"}]}`},
	}, {
		name: "upload with an empty name",
		req:  request{method: "POST", target: "/v1/modules?name=", body: wasm8, header: map[string]string{"Content-Type": "application/wasm"}},
		want: response{status: 400, header: map[string]string{"Content-Type": problemType, "Location": ""},
			body: `{"type":"https://wasmstream.io/problems/invalid-request","title":"Invalid request","status":400,` +
				`"detail":"name: invalid module name \"\": want a lowercase letter or digit, then at most 62 lowercase letters, digits, '_' or '-'",` +
				`"problems":[{"field":"name","message":"invalid module name \"\": want a lowercase letter or digit, then at most 62 lowercase letters, digits, '_' or '-'"}]}`},
	}, {
		name: "upload of unknown length within the limit",
		req:  request{method: "POST", target: "/v1/modules", body: wasm8, length: -1, header: map[string]string{"Content-Type": "application/wasm"}},
		want: response{status: 201, body: uploaded, header: map[string]string{
			"Content-Type": jsonType, "Location": "/v1/modules/sha256:0061736d01000000"}},
		wantUploaded: []string{wasm8},
	}, {
		name: "upload as text",
		req:  request{method: "POST", target: "/v1/modules", body: wasm8, header: map[string]string{"Content-Type": "text/plain; charset=utf-8"}},
		want: response{status: 415, header: map[string]string{"Content-Type": problemType, "Location": ""},
			body: `{"type":"about:blank","title":"Unsupported Media Type","status":415,"detail":"Content-Type must be one of application/wasm, application/octet-stream; got text/plain"}`},
	}, {
		name: "upload without a content type",
		req:  request{method: "POST", target: "/v1/modules", body: wasm8},
		want: response{status: 415, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"about:blank","title":"Unsupported Media Type","status":415,"detail":"Content-Type must be one of application/wasm, application/octet-stream; got none"}`},
	}, {
		name: "upload empty",
		req:  request{method: "POST", target: "/v1/modules", header: map[string]string{"Content-Type": "application/wasm"}},
		want: response{status: 400, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/invalid-request","title":"Invalid request","status":400,"detail":"empty body: send the module"}`},
	}, {
		name: "upload larger than the limit",
		req:  request{method: "POST", target: "/v1/modules", body: wasm8 + "x", header: map[string]string{"Content-Type": "application/wasm"}},
		want: response{status: 413, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"about:blank","title":"Request Entity Too Large","status":413,"detail":"module exceeds the limit of 8 bytes","limit":8}`},
	}, {
		name: "upload of unknown length larger than the limit",
		req:  request{method: "POST", target: "/v1/modules", body: wasm8 + "x", length: -1, header: map[string]string{"Content-Type": "application/wasm"}},
		want: response{status: 413, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"about:blank","title":"Request Entity Too Large","status":413,"detail":"module exceeds the limit of 8 bytes","limit":8}`},
	}, {
		name:      "upload fails validation",
		uploadErr: &validationError{problems: []string{"missing export memory", `function "parse": unknown kind "mapp"`}},
		req:       request{method: "POST", target: "/v1/modules", body: wasm8, header: map[string]string{"Content-Type": "application/wasm"}},
		want: response{status: 400, header: map[string]string{"Content-Type": problemType, "Location": ""},
			body: `{"type":"https://wasmstream.io/problems/invalid-module","title":"Invalid module","status":400,` +
				`"detail":"invalid module: missing export memory; function \"parse\": unknown kind \"mapp\"",` +
				`"problems":[{"message":"missing export memory"},{"message":"function \"parse\": unknown kind \"mapp\""}]}`},
	}, {
		name: "list",
		req:  request{method: "GET", target: "/v1/modules"},
		want: response{status: 200, header: map[string]string{"Content-Type": jsonType},
			body: `{"modules":[{"id":"sha256:0061736d","size":4,"functions":[{"name":"parse","kind":"map"}],"uploaded":"2026-01-02T03:04:05Z"},` +
				`{"id":"sha256:00ff","size":2,"functions":[{"name":"keep","kind":"filter"}],"uploaded":"2026-01-02T03:04:05Z","used_by":["job-1"]}]}`},
	}, {
		name: "get",
		req:  request{method: "GET", target: "/v1/modules/sha256:00ff"},
		want: response{status: 200, header: map[string]string{"Content-Type": jsonType},
			body: `{"id":"sha256:00ff","size":2,"functions":[{"name":"keep","kind":"filter"}],"uploaded":"2026-01-02T03:04:05Z","used_by":["job-1"]}`},
	}, {
		name: "get missing",
		req:  request{method: "GET", target: "/v1/modules/sha256:beef"},
		want: response{status: 404, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/not-found","title":"Not found","status":404,"detail":"module sha256:beef: not found"}`},
	}, {
		name: "delete",
		req:  request{method: "DELETE", target: "/v1/modules/sha256:0061736d"},
		want: response{status: 204, header: map[string]string{"Content-Type": ""}},
	}, {
		name: "delete in use",
		req:  request{method: "DELETE", target: "/v1/modules/sha256:00ff"},
		want: response{status: 409, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/module-in-use","title":"Module in use","status":409,"detail":"module sha256:00ff used by jobs job-1: in use"}`},
	}, {
		name: "delete missing",
		req:  request{method: "DELETE", target: "/v1/modules/sha256:beef"},
		want: response{status: 404, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"https://wasmstream.io/problems/not-found","title":"Not found","status":404,"detail":"module sha256:beef: not found"}`},
	}, {
		name: "put is not allowed",
		req:  request{method: "PUT", target: "/v1/modules/sha256:00ff"},
		want: response{status: 405, header: map[string]string{"Content-Type": problemType, "Allow": "DELETE, GET, HEAD"},
			body: `{"type":"about:blank","title":"Method Not Allowed","status":405,"detail":"PUT is not allowed on /v1/modules/sha256:00ff; allowed: DELETE, GET, HEAD"}`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mods, jobs := fixtures()
			mods.uploadErr = tt.uploadErr
			h := New(Config{Modules: mods, Jobs: jobs, MaxModuleSize: 8, Logger: testLogger(t)})
			tt.want.check(t, tt.req.do(h))
			var got []string
			for _, b := range mods.uploaded {
				got = append(got, string(b))
			}
			if !slices.Equal(got, tt.wantUploaded) {
				t.Errorf("uploaded %q, want %q", got, tt.wantUploaded)
			}
			if !slices.Equal(mods.named, tt.wantNamed) {
				t.Errorf("named %q, want %q", mods.named, tt.wantNamed)
			}
		})
	}
}

func TestModuleDeleteRemoves(t *testing.T) {
	mods, jobs := fixtures()
	h := New(Config{Modules: mods, Jobs: jobs, Logger: testLogger(t)})
	response{status: 204}.check(t, request{method: "DELETE", target: "/v1/modules/sha256:0061736d"}.do(h))
	response{status: 404, body: `{"type":"https://wasmstream.io/problems/not-found","title":"Not found","status":404,"detail":"module sha256:0061736d: not found"}`}.
		check(t, request{method: "GET", target: "/v1/modules/sha256:0061736d"}.do(h))
}

func TestDefaultLimits(t *testing.T) {
	tests := []struct {
		name string
		req  request
		want response
	}{{
		name: "module",
		req:  request{method: "POST", target: "/v1/modules", body: wasm8, length: 64<<20 + 1, header: map[string]string{"Content-Type": "application/wasm"}},
		want: response{status: 413, body: `{"type":"about:blank","title":"Request Entity Too Large","status":413,"detail":"module exceeds the limit of 64 MiB","limit":67108864}`},
	}, {
		name: "spec",
		req:  request{method: "POST", target: "/v1/jobs", body: "{}", length: 1<<20 + 1},
		want: response{status: 413, body: `{"type":"about:blank","title":"Request Entity Too Large","status":413,"detail":"job spec exceeds the limit of 1 MiB","limit":1048576}`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mods, jobs := fixtures()
			h := New(Config{Modules: mods, Jobs: jobs, Logger: testLogger(t)})
			tt.want.check(t, tt.req.do(h))
		})
	}
}

func TestByteSize(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{1, "1 byte"},
		{1000, "1000 bytes"},
		{1024, "1 KiB"},
		{1536, "1536 bytes"},
		{3 << 10, "3 KiB"},
		{1 << 20, "1 MiB"},
		{64 << 20, "64 MiB"},
		{1<<20 + 1<<10, "1025 KiB"},
	}
	for _, tt := range tests {
		if got := byteSize(tt.n); got != tt.want {
			t.Errorf("byteSize(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
