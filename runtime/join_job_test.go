package runtime

import (
	"fmt"
	"testing"

	"wasmstream.io/platform/watermark"
)

// TestIntervalJoinJobs runs generator jobs with an interval join end to end
// inside the runtime: 1000 clicks of one user, 10 ms apart, joined with
// themselves from two sources of different parallelism.
func TestIntervalJoinJobs(t *testing.T) {
	m := newTestManager(t)
	tests := []struct {
		name     string
		interval string
		pairs    int64
	}{
		{"inclusive 10 ms: each click meets itself and both neighbours", `{lower: -10ms, upper: 10ms}`, 1000 + 2*999},
		{"exclusive 10 ms: each click meets itself", `{lower: -10ms, upper: 10ms, lower_exclusive: true, upper_exclusive: true}`, 1000},
		{"lower bound only: each click meets itself and the one before", `{lower: -10ms, upper: 0s}`, 1000 + 999},
		{"no overlap", `{lower: 1ms, upper: 9ms}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := runJob(t, m, fmt.Sprintf(`
name: interval-join
sources:
  - {id: left, parallelism: 2, generator: {kind: clicks, count: 1000, keys: 1}, watermark: {strategy: monotonous, interval: 0s}}
  - {id: right, parallelism: 1, generator: {kind: clicks, count: 1000, keys: 1}, watermark: {strategy: monotonous, interval: 0s}}
operators:
  - id: join
    parallelism: 2
    join: {left: {input: left, key_by: {field: user}}, right: {input: right, key_by: {field: user}}, interval: %s}
sinks: [{id: out, input: join, discard: true}]
`, tt.interval))
			join := vertexInfo(info, "join")
			if join.RecordsIn != 2000 || join.RecordsOut != tt.pairs || join.LateRecords != 0 {
				t.Fatalf("join: in %d out %d late %d, want 2000, %d, 0", join.RecordsIn, join.RecordsOut, join.LateRecords, tt.pairs)
			}
			if join.Watermark == nil || *join.Watermark != watermark.MaxWatermark {
				t.Fatalf("join watermark %v, want the end of input", join.Watermark)
			}
		})
	}
}

// TestWindowJoinJobs runs window joins end to end inside the runtime: 1000
// clicks of one user, 10 ms apart from a whole second, joined with
// themselves.
func TestWindowJoinJobs(t *testing.T) {
	m := newTestManager(t)
	tests := []struct {
		name   string
		window string
		pairs  int64
	}{
		{"tumbling 1 s: 10 windows of 100 x 100", `{type: tumbling, size: 1s}`, 10 * 100 * 100},
		{"sliding 2 s every 1 s: 11 windows", `{type: sliding, size: 2s, slide: 1s}`, 2*100*100 + 9*200*200},
		{"session: one session of everything", `{type: session, gap: 1s}`, 1000 * 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := runJob(t, m, fmt.Sprintf(`
name: window-join
sources:
  - {id: left, parallelism: 2, generator: {kind: clicks, count: 1000, keys: 1}, watermark: {strategy: monotonous, interval: 0s}}
  - {id: right, parallelism: 1, generator: {kind: clicks, count: 1000, keys: 1}, watermark: {strategy: monotonous, interval: 0s}}
operators:
  - id: join
    parallelism: 2
    join: {left: {input: left, key_by: {field: user}}, right: {input: right, key_by: {field: user}}, window: %s}
sinks: [{id: out, input: join, discard: true}]
`, tt.window))
			join := vertexInfo(info, "join")
			if join.RecordsIn != 2000 || join.RecordsOut != tt.pairs || join.LateRecords != 0 {
				t.Fatalf("join: in %d out %d late %d, want 2000, %d, 0", join.RecordsIn, join.RecordsOut, join.LateRecords, tt.pairs)
			}
		})
	}
}
