package runtime

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"wasmstream.io/platform/runtime/exec"
)

// TestBudgetsReachTheOperators runs a window job under a worker whose
// window-contents and keyed-state budgets are tiny: each job fails with the
// error of the budget it outgrew, naming the configured figure.
func TestBudgetsReachTheOperators(t *testing.T) {
	tests := []struct {
		name    string
		budgets exec.Budgets
		op      string
		want    string
	}{
		{"window contents", exec.Budgets{WindowContents: 4096},
			"window: {type: tumbling, size: 1h}, aggregate: {builtin: count}",
			"over the budget of 4096 bytes per subtask"},
		{"keyed state of an interval join", exec.Budgets{KeyedState: 4096},
			"join: {left: {input: gen, key_by: {field: user}}, right: {input: gen2, key_by: {field: user}}, interval: {lower: -1h, upper: 1h}}",
			"join state exceeds its budget of 4096 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewManager(context.Background(), Config{
				DataDir: t.TempDir(), Host: newTestHost(t), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Budgets: tt.budgets,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = m.Close(context.Background()) })
			spec := `
name: tiny-budget
sources:
  - {id: gen, generator: {kind: clicks, count: 20000}, timestamp: {field: ts}, watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 1s}}
  - {id: gen2, generator: {kind: clicks, count: 20000}, timestamp: {field: ts}, watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 1s}}
operators:
  - {id: op, input: gen, key_by: {field: user}, ` + tt.op + `}
sinks: [{id: out, input: op, discard: true}]
`
			if strings.Contains(tt.op, "join:") {
				spec = strings.Replace(spec, "{id: op, input: gen, key_by: {field: user}, ", "{id: op, ", 1)
			}
			info, err := m.SubmitJob(context.Background(), []byte(spec))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if info, err = m.WaitJob(ctx, info.ID); err != nil {
				t.Fatal(err)
			}
			if info.State != StateFailed || !strings.Contains(info.Failure, tt.want) {
				t.Fatalf("job %s (%s), want FAILED with %q", info.State, info.Failure, tt.want)
			}
		})
	}
}
