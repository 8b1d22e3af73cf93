package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"wasmstream.io/platform/runtime"
)

// logLines decodes the JSON log lines in buf.
func logLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		lines = append(lines, m)
	}
	return lines
}

// checkLog compares the listed fields of a log line; "duration" and "stack"
// are only required to be present.
func checkLog(t *testing.T, line map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if got, ok := line[k]; !ok || (k != "duration" && k != "stack" && got != v) {
			t.Errorf("log %s = %v, want %v (line %v)", k, got, v, line)
		}
	}
}

func TestRequestLog(t *testing.T) {
	var buf bytes.Buffer
	mods, jobs := fixtures()
	h := New(Config{Modules: mods, Jobs: jobs, Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	rec := request{method: "GET", target: "/v1/jobs/job-9"}.do(h)
	id := rec.Header().Get("X-Request-Id")
	if id == "" {
		t.Fatal("no X-Request-Id")
	}
	lines := logLines(t, &buf)
	if len(lines) != 1 {
		t.Fatalf("%d log lines, want 1: %v", len(lines), lines)
	}
	checkLog(t, lines[0], map[string]any{"level": "INFO", "msg": "request", "request_id": id,
		"method": "GET", "path": "/v1/jobs/job-9", "status": float64(404), "duration": nil})
}

func TestInternalErrors(t *testing.T) {
	tests := []struct {
		name string
		// listErr is what ListJobs fails with; panicking makes it panic.
		listErr   error
		panicking bool
		wantLog   map[string]any
	}{{
		name:    "error",
		listErr: errors.New("registry unavailable"),
		wantLog: map[string]any{"level": "ERROR", "msg": "internal error", "error": "registry unavailable"},
	}, {
		name:    "an error the API does not know",
		listErr: errors.Join(errors.New("kv: timeout"), context.DeadlineExceeded),
		wantLog: map[string]any{"level": "ERROR", "msg": "internal error", "error": "kv: timeout\ncontext deadline exceeded"},
	}, {
		name:      "panic",
		panicking: true,
		wantLog:   map[string]any{"level": "ERROR", "msg": "internal error", "panic": "boom", "stack": nil},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			mods, _ := fixtures()
			var jobs Jobs = &fakeJobs{listErr: tt.listErr}
			if tt.panicking {
				jobs = panicJobs{&fakeJobs{}}
			}
			h := New(Config{Modules: mods, Jobs: jobs, Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
			rec := request{method: "GET", target: "/v1/jobs"}.do(h)
			id := rec.Header().Get("X-Request-Id")
			if id == "" {
				t.Fatal("no X-Request-Id")
			}
			response{status: 500, header: map[string]string{"Content-Type": problemType},
				body: `{"type":"about:blank","title":"Internal Server Error","status":500,"detail":"internal error (request id ` + id + `)"}`}.check(t, rec)
			lines := logLines(t, &buf)
			if len(lines) != 2 {
				t.Fatalf("%d log lines, want 2: %v", len(lines), lines)
			}
			tt.wantLog["request_id"] = id
			checkLog(t, lines[0], tt.wantLog)
			checkLog(t, lines[1], map[string]any{"msg": "request", "request_id": id, "status": float64(500)})
		})
	}
}

// panicJobs panics in ListJobs.
type panicJobs struct{ *fakeJobs }

func (panicJobs) ListJobs(context.Context) ([]runtime.JobInfo, error) { panic("boom") }

func TestPanicAfterTheResponseBegan(t *testing.T) {
	var buf bytes.Buffer
	mods, jobs := fixtures()
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("partial"))
		panic("boom")
	})
	h := New(Config{Modules: mods, Jobs: jobs, Metrics: metrics, Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	var rec *httptest.ResponseRecorder
	func() {
		defer func() {
			if v := recover(); v != http.ErrAbortHandler {
				t.Errorf("recovered %v, want http.ErrAbortHandler", v)
			}
		}()
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	}()
	if got := rec.Body.String(); got != "partial" {
		t.Errorf("body = %q, want only the part written before the panic", got)
	}
	lines := logLines(t, &buf)
	if len(lines) != 1 {
		t.Fatalf("%d log lines, want 1: %v", len(lines), lines)
	}
	checkLog(t, lines[0], map[string]any{"level": "ERROR", "msg": "panic after the response began",
		"request_id": rec.Header().Get("X-Request-Id"), "panic": "boom", "stack": nil})
}

func TestNewNeedsModulesAndJobs(t *testing.T) {
	mods, jobs := fixtures()
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no modules", Config{Jobs: jobs}},
		{"no jobs", Config{Modules: mods}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if v := recover(); v != "api: Config.Modules and Config.Jobs are required" {
					t.Errorf("recovered %v", v)
				}
			}()
			New(tt.cfg)
		})
	}
}
