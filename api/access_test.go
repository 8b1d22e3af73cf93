package api

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func bearer(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

func withType(h map[string]string, ct string) map[string]string {
	out := map[string]string{"Content-Type": ct}
	for k, v := range h {
		out[k] = v
	}
	return out
}

func TestScopes(t *testing.T) {
	denied := func(route, need, has string) string {
		return `{"type":"https://wasmstream.io/problems/insufficient-scope","title":"Insufficient scope","status":403,"detail":"` +
			route + ` needs a token of scope ` + need + `; this one has scope ` + has + `"}`
	}
	forbidden := map[string]string{"Content-Type": problemType}
	tests := []struct {
		name       string
		req        request
		wantStatus int
		wantBody   string
	}{
		{"read lists jobs", request{method: "GET", target: "/v1/jobs/job-2", header: bearer("read-secret")}, 200,
			`{"id":"job-2","name":"done","state":"FINISHED","created":"2026-01-02T03:04:05Z","ended":"2026-01-02T04:00:00Z"}`},
		{"read lists savepoints", request{method: "GET", target: "/v1/jobs/job-1/savepoints", header: bearer("read-secret")}, 200, ""},
		{"read cannot submit", request{method: "POST", target: "/v1/jobs", body: "{}", header: withType(bearer("read-secret"), "application/json")}, 403,
			denied("POST /v1/jobs", "submit", "read")},
		{"read cannot upload", request{method: "POST", target: "/v1/modules", body: wasm8, header: withType(bearer("read-secret"), "application/wasm")}, 403,
			denied("POST /v1/modules", "submit", "read")},
		{"read cannot cancel", request{method: "POST", target: "/v1/jobs/job-1/cancel", header: bearer("read-secret")}, 403,
			denied("POST /v1/jobs/job-1/cancel", "submit", "read")},
		{"submit submits", request{method: "POST", target: "/v1/jobs", body: "{}", header: withType(bearer("submit-secret"), "application/json")}, 201,
			`{"id":"job-new","state":"CREATED"}`},
		{"submit uploads", request{method: "POST", target: "/v1/modules", body: wasm8, header: withType(bearer("submit-secret"), "application/wasm")}, 201, ""},
		{"submit cancels", request{method: "POST", target: "/v1/jobs/job-1/cancel", header: bearer("submit-secret")}, 200, ""},
		// The fake knows no job-9: the scope lets the request through to
		// the lookup.
		{"submit stops", request{method: "POST", target: "/v1/jobs/job-9/stop", header: bearer("submit-secret")}, 404, ""},
		{"submit takes savepoints", request{method: "POST", target: "/v1/jobs/job-9/savepoints", header: bearer("submit-secret")}, 404, ""},
		{"submit reads", request{method: "GET", target: "/v1/modules", header: bearer("submit-secret")}, 200, ""},
		{"submit cannot delete", request{method: "DELETE", target: "/v1/modules/sha256:0061736d", header: bearer("submit-secret")}, 403,
			denied("DELETE /v1/modules/sha256:0061736d", "admin", "submit")},
		{"submit cannot use an unknown mutation", request{method: "PUT", target: "/v1/jobs/job-1", header: bearer("submit-secret")}, 403,
			denied("PUT /v1/jobs/job-1", "admin", "submit")},
		{"admin deletes", request{method: "DELETE", target: "/v1/modules/sha256:0061736d", header: bearer("admin-secret")}, 204, ""},
		{"admin submits", request{method: "POST", target: "/v1/jobs", body: "{}", header: withType(bearer("admin-secret"), "application/json")}, 201,
			`{"id":"job-new","state":"CREATED"}`},
		{"admin reaches the method check", request{method: "PUT", target: "/v1/jobs/job-1", header: bearer("admin-secret")}, 405, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mods, jobs := fixtures()
			h := New(Config{Modules: mods, Jobs: jobs, Checkpoints: fakeCheckpoints{}, Logger: testLogger(t), Token: "admin-secret",
				Tokens: []Token{{Name: "dashboard", Secret: "read-secret", Scope: ScopeRead}, {Secret: "submit-secret", Scope: ScopeSubmit}}})
			rec := tt.req.do(h)
			if tt.wantBody == "" {
				if rec.Code != tt.wantStatus {
					t.Errorf("status %d, want %d (body %s)", rec.Code, tt.wantStatus, rec.Body)
				}
				return
			}
			var header map[string]string
			if tt.wantStatus == 403 {
				header = forbidden
			}
			response{status: tt.wantStatus, header: header, body: tt.wantBody}.check(t, rec)
			if tt.wantStatus == 403 && (len(jobs.submitted) != 0 || len(mods.uploaded) != 0 || len(mods.mods) != 2) {
				t.Errorf("a refused request changed something: %d submitted, %d uploaded, %d modules", len(jobs.submitted), len(mods.uploaded), len(mods.mods))
			}
		})
	}
}

// TestAuditLog: every mutation under /v1, allowed or not, logs one audit
// line naming who (never the token), the route, the module or job and the
// status; reads log none.
func TestAuditLog(t *testing.T) {
	var buf bytes.Buffer
	mods, jobs := fixtures()
	h := New(Config{Modules: mods, Jobs: jobs, Checkpoints: fakeCheckpoints{}, Token: "admin-secret",
		Logger: slog.New(slog.NewJSONHandler(&buf, nil)),
		Tokens: []Token{{Name: "ci", Secret: "submit-secret", Scope: ScopeSubmit}, {Secret: "read-secret", Scope: ScopeRead}}})
	reqs := []request{
		{method: "POST", target: "/v1/modules", body: wasm8, header: withType(bearer("submit-secret"), "application/wasm")},
		{method: "POST", target: "/v1/jobs?from_savepoint=job-1:4", body: "{}", header: withType(bearer("submit-secret"), "application/json")},
		{method: "POST", target: "/v1/jobs", body: "{}", header: withType(bearer("submit-secret"), "application/json")},
		{method: "GET", target: "/v1/jobs", header: bearer("read-secret")},
		{method: "POST", target: "/v1/jobs/job-1/cancel", header: bearer("submit-secret")},
		{method: "POST", target: "/v1/jobs/job-2/cancel", header: bearer("submit-secret")},
		{method: "DELETE", target: "/v1/modules/sha256:00ff", header: bearer("read-secret")},
		{method: "DELETE", target: "/v1/modules/sha256:0061736d", header: bearer("admin-secret")},
		{method: "POST", target: "/v1/jobs/job-1/stop", header: bearer("wrong-secret")},
		{method: "POST", target: "/v1/jobs/job-1/savepoints"},
	}
	for _, rq := range reqs {
		rq.do(h)
	}
	var audit []map[string]any
	for _, line := range logLines(t, &buf) {
		if line["msg"] == "audit" {
			if line["level"] != "INFO" || line["time"] == nil || line["duration"] == nil || line["request_id"] == nil {
				t.Errorf("audit line lacks level INFO, time, duration or request_id: %v", line)
			}
			for _, k := range []string{"level", "time", "duration", "request_id", "msg"} {
				delete(line, k)
			}
			audit = append(audit, line)
		}
	}
	want := []map[string]any{
		{"who": "ci", "scope": "submit", "method": "POST", "route": "/v1/modules", "module": "sha256:0061736d01000000", "status": 201.0},
		{"who": "ci", "scope": "submit", "method": "POST", "route": "/v1/jobs", "savepoint": "job-1:4", "status": 400.0},
		{"who": "ci", "scope": "submit", "method": "POST", "route": "/v1/jobs", "job": "job-new", "status": 201.0},
		{"who": "ci", "scope": "submit", "method": "POST", "route": "/v1/jobs/{id}/cancel", "job": "job-1", "status": 200.0},
		{"who": "ci", "scope": "submit", "method": "POST", "route": "/v1/jobs/{id}/cancel", "job": "job-2", "status": 409.0},
		{"who": "read", "scope": "read", "method": "DELETE", "route": "/v1/modules/{id}", "module": "sha256:00ff", "status": 403.0},
		{"who": "admin", "scope": "admin", "method": "DELETE", "route": "/v1/modules/{id}", "module": "sha256:0061736d", "status": 204.0},
		{"who": "unauthenticated", "method": "POST", "route": "/v1/jobs/{id}/stop", "job": "job-1", "status": 401.0},
		{"who": "unauthenticated", "method": "POST", "route": "/v1/jobs/{id}/savepoints", "job": "job-1", "status": 401.0},
	}
	if len(audit) != len(want) {
		t.Fatalf("%d audit lines, want %d:\n%v", len(audit), len(want), audit)
	}
	for i := range want {
		if !sameFields(audit[i], want[i]) {
			t.Errorf("audit line %d = %v\nwant %v", i, audit[i], want[i])
		}
	}
	if strings.Contains(buf.String(), "secret") {
		t.Errorf("the log holds a token:\n%s", buf.String())
	}
}

func sameFields(got, want map[string]any) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// TestAuditWithoutAuth: without tokens, mutations are audited as
// anonymous with every scope.
func TestAuditWithoutAuth(t *testing.T) {
	var buf bytes.Buffer
	mods, jobs := fixtures()
	h := New(Config{Modules: mods, Jobs: jobs, Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	request{method: "POST", target: "/v1/jobs/job-1/cancel"}.do(h)
	lines := logLines(t, &buf)
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want the audit line and the request line: %v", len(lines), lines)
	}
	checkLog(t, lines[0], map[string]any{"msg": "audit", "who": "anonymous", "scope": "admin", "method": "POST",
		"route": "/v1/jobs/{id}/cancel", "job": "job-1", "status": 200.0})
}

func TestValidateTokens(t *testing.T) {
	for _, tc := range []struct {
		tokens []Token
		want   string
	}{
		{[]Token{{Secret: "a", Scope: ScopeRead}, {Secret: "b", Scope: ScopeAdmin}}, ""},
		{[]Token{{Name: "ci", Scope: ScopeRead}}, "token ci: empty token"},
		{[]Token{{Secret: "a"}}, "token #0: no scope"},
		{[]Token{{Secret: "a", Scope: ScopeRead}, {Secret: "a", Scope: ScopeAdmin}}, "token #1: the same token as an earlier one"},
	} {
		got := ""
		if err := ValidateTokens(tc.tokens); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("ValidateTokens(%v) = %q, want %q", tc.tokens, got, tc.want)
		}
	}
	for name, want := range map[string]Scope{"read": ScopeRead, "submit": ScopeSubmit, "admin": ScopeAdmin} {
		if got, err := ParseScope(name); got != want || err != nil {
			t.Errorf("ParseScope(%q) = %v, %v", name, got, err)
		}
	}
	if _, err := ParseScope("write"); err == nil || err.Error() != `scope "write" is not read, submit or admin` {
		t.Errorf("ParseScope(write): %v", err)
	}
}
