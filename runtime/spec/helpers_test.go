package spec

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Module ids that look like uploaded modules.
var (
	modA = "sha256:" + strings.Repeat("a", 64)
	modB = "sha256:" + strings.Repeat("0123456789abcdef", 4)
)

// dur is a Duration from a Go duration string.
func dur(s string) Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return Duration{d}
}

// minimalSpec has only what a job needs; minimalJob is what it parses to.
const minimalSpec = `
name: j
sources: [{id: src, generator: {kind: sequence}}]
sinks: [{id: out, input: src, discard: true}]
`

func minimalJob() *Job {
	return &Job{
		Name:           "j",
		Parallelism:    1,
		MaxParallelism: 128,
		Time:           "event",
		BufferTimeout:  dur("100ms"),
		Placement:      "local",
		Restart:        &Restart{Strategy: "none", Delay: dur("1s"), MaxDelay: dur("5m"), Multiplier: 2, ResetAfter: dur("1h"), MaxFailuresPerInterval: 1, Interval: dur("1m")},
		OnUDFError:     OnUDFError{Policy: "fail"},
		UDF:            UDFLimits{MemoryLimit: 64 << 20, CallTimeout: dur("10s"), BatchSize: 1024},
		State:          &StateBackend{Backend: "memory"},
		Sources:        []Source{{ID: "src", Parallelism: 1, Generator: &Generator{Kind: "sequence", Keys: 1000}}},
		Sinks:          []Sink{{ID: "out", Input: "src", Parallelism: 1, Discard: true}},
	}
}

// withOps is the minimal spec with operators, its sink reading the last one.
func withOps(ops string) string {
	return "name: j\nsources: [{id: src, generator: {kind: sequence}}]\noperators:\n" + ops +
		"sinks: [{id: out, input: op, discard: true}]\n"
}

// show renders a job for failure messages.
func show(j *Job) string {
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// mustParse parses a spec the test expects to be valid.
func mustParse(t *testing.T, spec string) *Job {
	t.Helper()
	j, err := Parse([]byte(spec))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return j
}
