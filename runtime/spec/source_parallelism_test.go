package spec

import (
	"fmt"
	"testing"
)

// TestSourceParallelism: a source gets the job's parallelism, but no more
// subtasks than it has splits, unless it sets its own.
func TestSourceParallelism(t *testing.T) {
	tests := []struct {
		name   string
		source string
		want   int
	}{
		{"whole stream", `jetstream: {stream: S}`, 1},
		{"one subject", `jetstream: {stream: S, subjects: [a]}`, 1},
		{"two subjects", `jetstream: {stream: S, subjects: [a, b]}`, 2},
		{"more subjects than the job's parallelism", `jetstream: {stream: S, subjects: [a, b, c, d, e, f]}`, 4},
		{"its own parallelism beyond its splits", `{parallelism: 3, jetstream: {stream: S, subjects: [a]}}`, 3},
		{"a KV bucket", `kv: {bucket: B}`, 1},
		{"a generator", `generator: {kind: sequence}`, 4},
		{"core NATS", `nats: {subject: s}`, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "{id: in, " + tt.source + "}"
			if tt.source[0] == '{' {
				src = "{id: in, " + tt.source[1:]
			}
			j := mustParse(t, fmt.Sprintf(`
name: p
parallelism: 4
sources: [%s]
sinks: [{id: out, input: in, print: {}}]
`, src))
			if got := j.Sources[0].Parallelism; got != tt.want {
				t.Fatalf("source parallelism %d, want %d", got, tt.want)
			}
			if got := j.Sinks[0].Parallelism; got != 4 {
				t.Fatalf("sink parallelism %d, want the job's 4", got)
			}
		})
	}
}
