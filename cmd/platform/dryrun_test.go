package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wasmstream.io/platform/internal/jsonschema"
	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime/spec"

	"go.yaml.in/yaml/v3"
)

const dryRunSpec = `name: upper
parallelism: 2
sources:
  - id: lines
    jetstream: {stream: TEXT, subjects: ["text.>"]}
operators:
  - id: up
    input: lines
    map: {module: "MOD", function: upper}
  - {id: one, input: up, parallelism: 1, map: {module: "MOD", function: upper}}
sinks:
  - id: out
    input: one
    parallelism: 1
    jetstream: {subject: words}
`

// TestCLIDryRun: submit --dry-run prints what would run and starts
// nothing; invalid jobs and specs name the field and line, with a hint.
func TestCLIDryRun(t *testing.T) {
	ts := startTestServer(t)
	dir := t.TempDir()
	mod := ts.upload(wasmbuild.UDF(t, "upper-wat"))
	ts.stream("TEXT", []string{"text.>"}, nil)
	ts.stream("WORDS", []string{"words"}, nil)
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(content, "MOD", mod)), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	valid := write("job.yaml", dryRunSpec)
	names := map[string]string{"MOD": mod}
	ts.check(names, []cliRun{
		{args: []string{"job", "submit", "--dry-run", valid}, want: "job upper is valid: it would run 4 tasks (not started)\n" +
			"VERTEX  KIND  PARALLELISM  TASK\nlines  source  1  lines\nup  map  2  up\none  map  1  one\nout  sink  1  one\n"},
		{args: []string{"job", "submit", "--dry-run", valid, "-o", "id"}, want: "upper\n"},
		{args: []string{"job", "list", "-o", "id"}, want: ""},
		{args: []string{"job", "submit", "--dry-run", write("nostream.yaml", strings.Replace(dryRunSpec, "stream: TEXT", "stream: LINES", 1))},
			wantErr: "Invalid job (400):\n  sources[0].jetstream.stream: no stream \"LINES\"; create it with: platform stream add LINES --subjects 'text.>' (line 5)"},
		{args: []string{"job", "submit", write("nosink.yaml", strings.Replace(dryRunSpec, "subject: words", "subject: out.words", 1))},
			wantErr: "Invalid job (400):\n  sinks[0].jetstream.subject: no stream captures \"out.words\"; create one with: platform stream add OUT_WORDS --subjects out.words (line 15)"},
		{args: []string{"job", "submit", "--dry-run", write("kind.yaml", strings.Replace(dryRunSpec, "map: {module: \"MOD\", function: upper}}", "filter: {module: \"MOD\", function: uper}}", 1))},
			wantErr: "Invalid job (400):\n  operators[1].filter.function: module MOD has no function \"uper\" (it has upper (map)) (line 10)"},
		{args: []string{"job", "submit", "--dry-run", write("typo.yaml", strings.Replace(strings.Replace(dryRunSpec, "parallelism: 2", "paralelism: 2", 1), "input: up,", "input: upp,", 1))},
			wantErr: "Invalid job spec (400):\n  paralelism: unknown field (did you mean \"parallelism\"?) (line 2)\n" +
				"  operators[1].input: no source or operator has id \"upp\" (did you mean \"up\"?) (line 10)"},
		{args: []string{"job", "list", "-o", "id"}, want: ""},
	})
}

// TestCLISpecsMatchTheSchema: the job specs of this package's tests and
// of the demo are valid for the published JSON Schema.
func TestCLISpecsMatchTheSchema(t *testing.T) {
	mod := "sha256:" + strings.Repeat("a", 64)
	for name, s := range map[string]string{
		"dryRunSpec": strings.ReplaceAll(dryRunSpec, "MOD", mod),
		"cliJobSpec": strings.ReplaceAll(cliJobSpec, "%s", mod),
		"demoSpec":   fmt.Sprintf(demoSpec, mod),
	} {
		var v any
		if err := yaml.Unmarshal([]byte(s), &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		errs, err := jsonschema.Validate(spec.JSONSchema(), v)
		if err != nil || len(errs) > 0 {
			t.Errorf("%s: %v %s", name, err, strings.Join(errs, "; "))
		}
	}
}
