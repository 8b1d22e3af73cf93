package api

import (
	"net/http"
	"testing"
)

func TestAuth(t *testing.T) {
	const (
		missing = `{"type":"about:blank","title":"Unauthorized","status":401,"detail":"missing bearer token: send Authorization: Bearer \u003ctoken\u003e"}`
		invalid = `{"type":"about:blank","title":"Unauthorized","status":401,"detail":"invalid bearer token"}`
		jobs    = `{"jobs":[{"id":"job-1","name":"clicks","state":"RUNNING","created":"2026-01-02T03:04:05Z","vertices":[{"id":"parse","kind":"map","parallelism":2,"task":"t0","records_in":10,"records_out":9,"udf_errors":0,"skipped":0,"dead_lettered":0,"backpressure":0.5,"watermark":1700}]},{"id":"job-2","name":"done","state":"FINISHED","created":"2026-01-02T03:04:05Z","ended":"2026-01-02T04:00:00Z"}]}`
	)
	challenge := map[string]string{"Content-Type": problemType, "WWW-Authenticate": `Bearer realm="platform"`}
	tests := []struct {
		name  string
		token string
		req   request
		want  response
	}{{
		name:  "no token sent",
		token: "s3cret",
		req:   request{method: "GET", target: "/v1/jobs"},
		want:  response{status: 401, header: challenge, body: missing},
	}, {
		name:  "another scheme",
		token: "s3cret",
		req:   request{method: "GET", target: "/v1/jobs", header: map[string]string{"Authorization": "Basic czNjcmV0"}},
		want:  response{status: 401, header: challenge, body: missing},
	}, {
		name:  "wrong token",
		token: "s3cret",
		req:   request{method: "GET", target: "/v1/jobs", header: map[string]string{"Authorization": "Bearer s3cre"}},
		want:  response{status: 401, header: challenge, body: invalid},
	}, {
		name:  "right token",
		token: "s3cret",
		req:   request{method: "GET", target: "/v1/jobs", header: map[string]string{"Authorization": "Bearer s3cret"}},
		want:  response{status: 200, header: map[string]string{"WWW-Authenticate": ""}, body: jobs},
	}, {
		name:  "scheme in lower case",
		token: "s3cret",
		req:   request{method: "GET", target: "/v1/jobs", header: map[string]string{"Authorization": "bearer s3cret"}},
		want:  response{status: 200, body: jobs},
	}, {
		name:  "upload is checked before its content type",
		token: "s3cret",
		req:   request{method: "POST", target: "/v1/modules", body: wasm8},
		want:  response{status: 401, header: challenge, body: missing},
	}, {
		name:  "unknown /v1 route without a token",
		token: "s3cret",
		req:   request{method: "GET", target: "/v1/nope"},
		want:  response{status: 401, header: challenge, body: missing},
	}, {
		name:  "unknown /v1 route with the token",
		token: "s3cret",
		req:   request{method: "GET", target: "/v1/nope", header: map[string]string{"Authorization": "Bearer s3cret"}},
		want: response{status: 404, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"about:blank","title":"Not Found","status":404,"detail":"no route for GET /v1/nope"}`},
	}, {
		name:  "unclean path to /v1",
		token: "s3cret",
		req:   request{method: "GET", target: "/x/../v1/jobs"},
		want:  response{status: 401, header: challenge, body: missing},
	}, {
		name:  "healthz needs no token",
		token: "s3cret",
		req:   request{method: "GET", target: "/healthz"},
		want:  response{status: 200, body: `{"status":"ok"}`},
	}, {
		name:  "readyz needs no token",
		token: "s3cret",
		req:   request{method: "GET", target: "/readyz"},
		want:  response{status: 200, body: `{"status":"ok"}`},
	}, {
		name:  "metrics need no token",
		token: "s3cret",
		req:   request{method: "GET", target: "/metrics"},
		want:  response{status: 200, body: "metrics"},
	}, {
		name: "auth off",
		req:  request{method: "GET", target: "/v1/jobs"},
		want: response{status: 200, header: map[string]string{"WWW-Authenticate": ""}, body: jobs},
	}, {
		name: "auth off ignores a token",
		req:  request{method: "GET", target: "/v1/jobs", header: map[string]string{"Authorization": "Bearer anything"}},
		want: response{status: 200, body: jobs},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mods, jobs := fixtures()
			metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = w.Write([]byte("metrics\n"))
			})
			h := New(Config{Modules: mods, Jobs: jobs, Token: tt.token, Metrics: metrics, Logger: testLogger(t)})
			tt.want.check(t, tt.req.do(h))
		})
	}
}
