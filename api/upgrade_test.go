package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"wasmstream.io/platform/runtime"
)

func (s scripted) UpgradeJob(_ context.Context, id string, req runtime.UpgradeRequest) (runtime.SwitchInfo, error) {
	if req.Module == "bad-job" {
		return runtime.SwitchInfo{}, fmt.Errorf("%w: operators[0].process: the new module declares no state %q", runtime.ErrInvalidJob, "seen")
	}
	if req.Canary != nil && req.Canary.KeyGroups == "9-2" {
		return runtime.SwitchInfo{}, fmt.Errorf("%w: canary.key_groups: %q is reversed", runtime.ErrInvalidJob, req.Canary.KeyGroups)
	}
	return runtime.SwitchInfo{Job: id, Version: 2, FromCheckpoint: 7}, s.answer(id)
}

func (s scripted) PromoteJob(_ context.Context, id string, req runtime.PromoteRequest) (runtime.SwitchInfo, error) {
	if req.Probation.Records < 0 {
		return runtime.SwitchInfo{}, fmt.Errorf("%w: probation.records: %d, want 0 or more", runtime.ErrInvalidJob, req.Probation.Records)
	}
	return runtime.SwitchInfo{Job: id, Version: 3, FromCheckpoint: 9}, s.answer(id)
}

func (s scripted) RollbackJob(_ context.Context, id string) (runtime.SwitchInfo, error) {
	return runtime.SwitchInfo{Job: id, Version: 3, FromCheckpoint: 9}, s.answer(id)
}

func (s scripted) RescaleJob(_ context.Context, id string, req runtime.RescaleRequest) (runtime.SwitchInfo, error) {
	return runtime.SwitchInfo{Job: id, Version: 2, FromCheckpoint: 7}, s.answer(id)
}

// The live operations answer 202 with the switch begun, 400 naming the
// field or state a new version gets wrong, 409 while a switch is under way.
func TestUpgradeRoutes(t *testing.T) {
	h := New(Config{Modules: scripted{}, Jobs: scripted{}, Checkpoints: scripted{}, Logger: testLogger(t)})
	json := map[string]string{"Content-Type": "application/json"}
	tests := []struct {
		target, body string
		status       int
		want         string
	}{
		{"/v1/jobs/ok/upgrade", `{"module":"m2","probation":{"records":10}}`, http.StatusAccepted, `{"job":"ok","version":2,"from_checkpoint":7}`},
		{"/v1/jobs/ok/upgrade", `{"module":"bad-job"}`, http.StatusBadRequest, `state \"seen\"`},
		{"/v1/jobs/ok/upgrade", `{"module":"m2","canary":{"key_groups":"0-15"}}`, http.StatusAccepted, `"version":2`},
		{"/v1/jobs/ok/upgrade", `{"module":"m2","canary":{"key_groups":"9-2"}}`, http.StatusBadRequest, `canary.key_groups: \"9-2\" is reversed`},
		{"/v1/jobs/ok/upgrade", `{"module":"m2","canary":{"groups":"0-15"}}`, http.StatusBadRequest, `unknown field \"groups\"`},
		{"/v1/jobs/switching/upgrade", `{"module":"m2"}`, http.StatusConflict, "switch-in-progress"},
		{"/v1/jobs/ok/promote", ``, http.StatusAccepted, `{"job":"ok","version":3,"from_checkpoint":9}`},
		{"/v1/jobs/ok/promote", `{"probation":{"records":5}}`, http.StatusAccepted, `"version":3`},
		{"/v1/jobs/ok/promote", `{"probation":{"records":-1}}`, http.StatusBadRequest, `probation.records: -1`},
		{"/v1/jobs/plain/promote", ``, http.StatusConflict, "no-canary"},
		{"/v1/jobs/switching/promote", ``, http.StatusConflict, "switch-in-progress"},
		{"/v1/jobs/ok/rollback", ``, http.StatusAccepted, `{"job":"ok","version":3,"from_checkpoint":9}`},
		{"/v1/jobs/plain/rollback", ``, http.StatusConflict, "no-canary"},
		{"/v1/jobs/nope/rollback", ``, http.StatusNotFound, "not-found"},
		{"/v1/jobs/ok/rescale", `{"parallelism":4,"operators":{"sink":1}}`, http.StatusAccepted, `"from_checkpoint":7`},
		{"/v1/jobs/nocp/rescale", `{"parallelism":4}`, http.StatusConflict, "no-checkpoints"},
		{"/v1/jobs/nope/rescale", `{"parallelism":4}`, http.StatusNotFound, "not-found"},
	}
	for _, tc := range tests {
		rec := request{method: "POST", target: tc.target, body: tc.body, header: json}.do(h)
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("POST %s %s: %d %s, want %d with %s", tc.target, tc.body, rec.Code, rec.Body, tc.status, tc.want)
		}
	}
}
