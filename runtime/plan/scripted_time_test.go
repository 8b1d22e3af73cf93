package plan

import (
	"errors"
	"strings"
	"testing"

	"wasmstream.io/platform/runtime/spec"
)

// TestScriptedProcessingTime: a job whose test stream moves processing time
// is admitted with that one source, placed locally, with aligned
// checkpoints; each case it cannot hold in is refused naming the field.
func TestScriptedProcessingTime(t *testing.T) {
	const script = `  - id: script
    parallelism: 1
    test_stream: {steps: [{record: {value: x}}, {advance_processing_time: 1s}, {record: {value: y}}]}
`
	const rest = "operators: [{id: m, input: script, key_by: {field: user}, window: {type: tumbling, size: 1s}, aggregate: {builtin: count}}]\n" +
		"sinks: [{id: o, input: m, discard: true}]\n"
	tests := []struct {
		name, head, sources string
		want                []string
	}{
		{"admitted", "time: processing\ncheckpoint: {interval: 1s}\n", script, nil},
		{"another source", "", script + "  - {id: other, generator: {kind: clicks, count: 1}}\n",
			[]string{"sources: a job whose test stream moves processing time (sources[0].test_stream.steps[1].advance_processing_time) has that one source, got 2"}},
		{"spread", "placement: spread\n", script,
			[]string{"placement: spread does not go with a test stream that moves processing time (sources[0].test_stream.steps[1].advance_processing_time)"}},
		{"unaligned", "checkpoint: {interval: 1s, unaligned: true}\n", script,
			[]string{"checkpoint.unaligned does not go with a test stream that moves processing time"}},
		{"all three", "placement: spread\ncheckpoint: {interval: 1s, unaligned: true}\n", script + "  - {id: other, generator: {kind: clicks, count: 1}}\n",
			[]string{"sources: a job whose", "placement: spread does not", "checkpoint.unaligned does not"}},
		// Without an advance the job is on the wall clock, and may have
		// other sources.
		{"no advance", "", "  - {id: script, test_stream: {steps: [{record: {value: x}}]}}\n  - {id: other, generator: {kind: clicks, count: 1}}\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := spec.Parse([]byte("name: s\n" + tt.head + "sources:\n" + tt.sources + rest))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Build(j, lookup)
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidJob) {
				t.Fatalf("got %v, want an invalid job", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
