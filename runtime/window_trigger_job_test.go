package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime/spec"
)

// TestWindowTriggerJobs runs generator jobs whose windows have triggers and
// evictors end to end and checks how many results each emits: 1000 clicks
// 10 ms apart, 10 s of event time from a whole second, one watermark per
// record.
func TestWindowTriggerJobs(t *testing.T) {
	m := newTestManager(t)
	mod, err := m.UploadModule(context.Background(), wasmbuild.UDF(t, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		op      string
		results int64
	}{
		{"a global window with a purging count trigger", `window_all: {type: global, trigger: {type: count, count: 100, purge: true}}, aggregate: {builtin: count}`, 10},
		{"tumbling windows with a purging count trigger", `window_all: {type: tumbling, size: 1s, trigger: {type: count, count: 25, purge: true}}, aggregate: {builtin: sum, field: amount}`, 40},
		// Every second of the window, the last at its end.
		{"a continuous event-time trigger", `window_all: {type: tumbling, size: 10s, trigger: {type: continuous_event_time, interval: 1s}}, aggregate: {builtin: max, field: amount}`, 10},
		{"a global window with a count evictor", `window_all: {type: global, trigger: {type: count, count: 100}, evictor: {type: count, max: 50}},
    process_window: {module: ` + mod.ID + `, function: summary}`, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := runJob(t, m, fmt.Sprintf(`
name: triggers
sources: [{id: gen, generator: {kind: clicks, count: 1000, keys: 3}, watermark: {strategy: monotonous, interval: 0s}}]
operators:
  - {id: win, input: gen, %s}
sinks: [{id: out, input: win, discard: true}]
`, tt.op))
			win := vertexInfo(info, "win")
			if win.RecordsIn != 1000 || win.RecordsOut != tt.results || win.LateRecords != 0 {
				t.Fatalf("win: in %d out %d late %d, want 1000, %d, 0", win.RecordsIn, win.RecordsOut, win.LateRecords, tt.results)
			}
		})
	}
}

// TestWindowTriggerJobRefused: a trigger or evictor that does not fit its
// window is refused at submission, naming the field.
func TestWindowTriggerJobRefused(t *testing.T) {
	m := newTestManager(t)
	for _, tc := range []struct{ op, want string }{
		{`window_all: {type: global}, aggregate: {builtin: count}`, "operators[0].window_all.trigger: required by a global window"},
		{`window_all: {type: tumbling, size: 1s, evictor: {type: count, max: 5}}, aggregate: {builtin: count}`,
			"operators[0].window_all.evictor: needs the window's records"},
	} {
		_, err := m.SubmitJob(context.Background(), []byte(`
name: refused
sources: [{id: gen, generator: {kind: clicks, count: 10}}]
operators:
  - {id: win, input: gen, `+tc.op+`}
sinks: [{id: out, input: win, discard: true}]
`))
		var se *spec.Error
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("submit: %v, want a spec error with %q", err, tc.want)
		}
	}
}
