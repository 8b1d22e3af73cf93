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
	return runtime.SwitchInfo{Job: id, Version: 2, FromCheckpoint: 7}, s.answer(id)
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
		{"/v1/jobs/ok/upgrade", `{"module":"m2","canary":{"key_groups":"0-15"}}`, http.StatusBadRequest, `unknown field \"canary\"`},
		{"/v1/jobs/switching/upgrade", `{"module":"m2"}`, http.StatusConflict, "switch-in-progress"},
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
