package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime/exec"
)

// TestRestartStrategiesOnTrappingUDF runs a job whose map traps on one
// record, so that every run fails on it, under each restart strategy: the
// job restarts exactly as often as the strategy allows, then fails, and its
// exception history has one entry per failure with the subtask, the error,
// the attempt and the delay the strategy chose.
func TestRestartStrategiesOnTrappingUDF(t *testing.T) {
	p := newRecoveryPlatform(t)
	mod, err := p.m.UploadModule(context.Background(), wasmbuild.UDF(t, "faulty-wat"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		restart string
		// delays are the restarts' delays in milliseconds, first to last.
		delays   []int64
		attempts []int
	}{
		{"none", "{strategy: none}", nil, nil},
		{"fixed delay", "{strategy: fixed_delay, delay: 2ms, max_attempts: 3}", []int64{2, 2, 2}, []int{1, 2, 3}},
		{"exponential", "{strategy: exponential, delay: 1ms, max_delay: 6ms, multiplier: 2, max_attempts: 4, reset_after: 1h}",
			[]int64{1, 2, 4, 6}, []int{1, 2, 3, 4}},
		{"failure rate", "{strategy: failure_rate, delay: 1ms, max_failures_per_interval: 2, interval: 1h}", []int64{1, 1}, []int{1, 2}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, out := fmt.Sprintf("IN%d", i), fmt.Sprintf("OUT%d", i)
			p.stream(in, fmt.Sprintf("in%d", i))
			p.stream(out, fmt.Sprintf("out%d", i))
			for _, v := range []string{"a", "poison", "b"} {
				if _, err := p.js.Publish(context.Background(), fmt.Sprintf("in%d", i), []byte(v)); err != nil {
					t.Fatal(err)
				}
			}
			info, err := p.m.SubmitJob(context.Background(), fmt.Appendf(nil, `
name: restarts
restart: %s
sources: [{id: in, jetstream: {stream: %s}}]
operators: [{id: m, input: in, parallelism: 1, map: {module: %s, function: poison}}]
sinks: [{id: out, input: m, jetstream: {subject: out%d}}]
`, tt.restart, in, mod.ID, i))
			if err != nil {
				t.Fatal(err)
			}
			info = p.wait(info.ID)
			restarts := len(tt.delays)
			if info.State != StateFailed || info.Restarts != int64(restarts) {
				t.Fatalf("job %s after %d restarts (%s), want FAILED after %d", info.State, info.Restarts, info.Failure, restarts)
			}
			if len(info.Exceptions) != restarts+1 {
				t.Fatalf("%d exceptions, want %d: %+v", len(info.Exceptions), restarts+1, info.Exceptions)
			}
			// Newest first: the failure the strategy gave up on, then
			// the restarts from the last to the first.
			slices.Reverse(info.Exceptions)
			for k, x := range info.Exceptions {
				action, attempt, delay := exec.ActionFail, 0, int64(0)
				if k < restarts {
					action, attempt, delay = exec.ActionRestart, tt.attempts[k], tt.delays[k]
				}
				if x.Action != action || x.Attempt != attempt || x.DelayMS != delay {
					t.Errorf("exception %d: %s attempt %d delay %dms, want %s attempt %d delay %dms", k, x.Action, x.Attempt, x.DelayMS, action, attempt, delay)
				}
				if x.Task != "in" || x.Subtask == nil || *x.Subtask != 0 || !strings.Contains(x.Error, "function[poison]") {
					t.Errorf("exception %d: task %q subtask %v error %q, want in[0] and the trap", k, x.Task, x.Subtask, x.Error)
				}
				if k > 0 && x.Time.Before(info.Exceptions[k-1].Time) {
					t.Errorf("exception %d at %s before the one before it, at %s", k, x.Time, info.Exceptions[k-1].Time)
				}
			}
		})
	}
}
