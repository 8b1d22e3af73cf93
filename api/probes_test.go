package api

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestProbesAndPages(t *testing.T) {
	tests := []struct {
		name    string
		ready   func() error
		metrics http.Handler
		req     request
		want    response
	}{{
		name: "healthz",
		req:  request{method: "GET", target: "/healthz"},
		want: response{status: 200, header: map[string]string{"Content-Type": jsonType}, body: `{"status":"ok"}`},
	}, {
		name: "ready without a check",
		req:  request{method: "GET", target: "/readyz"},
		want: response{status: 200, header: map[string]string{"Content-Type": jsonType}, body: `{"status":"ok"}`},
	}, {
		name:  "ready",
		ready: func() error { return nil },
		req:   request{method: "GET", target: "/readyz"},
		want:  response{status: 200, header: map[string]string{"Content-Type": jsonType}, body: `{"status":"ok"}`},
	}, {
		name:  "not ready",
		ready: func() error { return errors.New("nats: not connected") },
		req:   request{method: "GET", target: "/readyz"},
		want: response{status: 503, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"not ready: nats: not connected"}`},
	}, {
		name: "metrics from the configured handler",
		metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("platform_up 1\n"))
		}),
		req:  request{method: "GET", target: "/metrics"},
		want: response{status: 200, header: map[string]string{"Content-Type": "text/plain"}, body: "platform_up 1"},
	}, {
		name: "healthz with DELETE",
		req:  request{method: "DELETE", target: "/healthz"},
		want: response{status: 405, header: map[string]string{"Content-Type": problemType, "Allow": "GET, HEAD"},
			body: `{"type":"about:blank","title":"Method Not Allowed","status":405,"detail":"DELETE is not allowed on /healthz; allowed: GET, HEAD"}`},
	}, {
		name: "unknown page",
		req:  request{method: "GET", target: "/index.html"},
		want: response{status: 404, header: map[string]string{"Content-Type": problemType},
			body: `{"type":"about:blank","title":"Not Found","status":404,"detail":"no route for GET /index.html"}`},
	}, {
		name: "unclean path is redirected",
		req:  request{method: "GET", target: "/v1//jobs"},
		want: response{status: 307, header: map[string]string{"Location": "/v1/jobs"},
			body: `<a href="/v1/jobs">Temporary Redirect</a>.` + "\n"},
	}, {
		name: "unclean path to no route is redirected too",
		req:  request{method: "GET", target: "/v1//nope"},
		want: response{status: 307, header: map[string]string{"Location": "/v1/nope"},
			body: `<a href="/v1/nope">Temporary Redirect</a>.` + "\n"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mods, jobs := fixtures()
			h := New(Config{Modules: mods, Jobs: jobs, Ready: tt.ready, Metrics: tt.metrics, Logger: testLogger(t)})
			tt.want.check(t, tt.req.do(h))
		})
	}
}

func TestDefaultMetrics(t *testing.T) {
	mods, jobs := fixtures()
	rec := request{method: "GET", target: "/metrics"}.do(New(Config{Modules: mods, Jobs: jobs, Logger: testLogger(t)}))
	if rec.Code != 200 {
		t.Fatalf("status = %d, want 200", rec.Code)
	}
	if !strings.Contains(rec.Body.String(), "\npromhttp_metric_handler_requests_total{code=\"200\"} ") {
		t.Errorf("body lacks the Prometheus handler's own counter:\n%s", rec.Body.String())
	}
}

func TestUI(t *testing.T) {
	mods, jobs := fixtures()
	// With a token, the UI stays open: the page asks for the token.
	h := New(Config{Modules: mods, Jobs: jobs, Token: "s3cret", Logger: testLogger(t)})
	tests := []struct {
		target, contentType string
		contains            []string
	}{
		{"/", "text/html; charset=utf-8", []string{`<script src="/ui/app.js" defer></script>`, `<link rel="stylesheet" href="/ui/style.css">`, `<svg id="graph"`}},
		{"/ui/app.js", "text/javascript; charset=utf-8", []string{`get("/v1/jobs")`, `get("/v1/modules")`, `get("/v1/workers")`, `"/backpressure"`, `"/checkpoints"`}},
		{"/ui/style.css", "text/css; charset=utf-8", []string{`#graph g.vertex.bottleneck rect`}},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			rec := request{method: "GET", target: tt.target}.do(h)
			if rec.Code != 200 {
				t.Fatalf("status = %d, want 200", rec.Code)
			}
			if got := rec.Header().Get("Content-Type"); got != tt.contentType {
				t.Errorf("Content-Type = %q, want %q", got, tt.contentType)
			}
			for _, s := range tt.contains {
				if !strings.Contains(rec.Body.String(), s) {
					t.Errorf("body lacks %s", s)
				}
			}
		})
	}
}
