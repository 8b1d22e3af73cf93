package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/runtime/spec"
	"wasmstream.io/platform/watermark"
)

// TestWindowJobs runs generator jobs with windows end to end inside the
// runtime and checks the counts every vertex reports.
func TestWindowJobs(t *testing.T) {
	m := newTestManager(t)
	// 1000 records 10 ms apart: 10 s of event time from BaseTimestamp,
	// which is a multiple of 1 s.
	if connector.BaseTimestamp%1000 != 0 {
		t.Fatal("BaseTimestamp is not a whole second")
	}
	tests := []struct {
		name    string
		source  string
		op      string
		windows int64
	}{
		{
			name:    "window_all tumbling, watermark after every record",
			source:  `parallelism: 2, watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 100ms, interval: 0s}`,
			op:      `window_all: {type: tumbling, size: 1s}, aggregate: {builtin: count}`,
			windows: 10,
		},
		{
			name:    "keyed sliding, periodic watermarks",
			source:  `parallelism: 1, watermark: {strategy: monotonous, interval: 5ms}`,
			op:      `parallelism: 2, key_by: {field: user}, window: {type: sliding, size: 2s, slide: 1s}, aggregate: {builtin: sum, field: amount}`,
			windows: 11 * 3,
		},
		{
			name:    "keyed session, no watermarks until the end",
			source:  `parallelism: 2`,
			op:      `parallelism: 3, key_by: {field: user}, window: {type: session, gap: 10s}, aggregate: {builtin: max, field: amount}`,
			windows: 3,
		},
		{
			name:    "window_all count window",
			source:  `parallelism: 1`,
			op:      `window_all: {type: count, count: 100}, aggregate: {builtin: count}`,
			windows: 10,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := runJob(t, m, fmt.Sprintf(`
name: windows
sources: [{id: gen, generator: {kind: clicks, count: 1000, keys: 3}, %s}]
operators: [{id: win, input: gen, %s}]
sinks: [{id: out, input: win, discard: true}]
`, tt.source, tt.op))
			win := vertexInfo(info, "win")
			if win.RecordsIn != 1000 || win.RecordsOut != tt.windows || win.LateRecords != 0 {
				t.Fatalf("win: in %d out %d late %d, want 1000, %d, 0", win.RecordsIn, win.RecordsOut, win.LateRecords, tt.windows)
			}
			if win.Watermark == nil || *win.Watermark != watermark.MaxWatermark {
				t.Fatalf("win watermark %v, want the end of input", win.Watermark)
			}
		})
	}
}

// TestExampleWindowJobsPlan checks that the job specs of udfs/avg,
// udfs/sessions and udfs/firings parse and resolve against their modules.
func TestExampleWindowJobsPlan(t *testing.T) {
	for _, name := range []string{"avg", "sessions", "firings"} {
		t.Run(name, func(t *testing.T) {
			mod := optest.Module(t, name)
			text, err := os.ReadFile(filepath.Join(wasmbuild.Root(), "udfs", name, "job.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			j, err := spec.Parse([]byte(strings.ReplaceAll(string(text), "${MODULE}", mod.ID)))
			if err != nil {
				t.Fatal(err)
			}
			p, err := plan.Build(j, func(id string) (abi.Description, bool) { return mod.Description, id == mod.ID })
			if err != nil {
				t.Fatal(err)
			}
			if got := p.ModuleIDs(); len(got) != 1 || got[0] != mod.ID {
				t.Fatalf("modules %v", got)
			}
		})
	}
}
