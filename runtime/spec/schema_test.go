package spec

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"wasmstream.io/platform/internal/jsonschema"
)

var update = flag.Bool("update", false, "rewrite docs/job.schema.json")

const schemaFile = "../../docs/job.schema.json"

// TestSchemaFile: docs/job.schema.json is what JSONSchema generates; go
// generate (or this test with -update) rewrites it.
func TestSchemaFile(t *testing.T) {
	got := JSONSchema()
	if *update {
		if err := os.WriteFile(schemaFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/job.schema.json is stale: run go generate ./runtime/spec")
	}
}

// validateSpec checks a YAML or JSON spec against the schema.
func validateSpec(t *testing.T, spec []byte) []string {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(spec, &v); err != nil {
		t.Fatalf("decode the spec: %v", err)
	}
	errs, err := jsonschema.Validate(JSONSchema(), v)
	if err != nil {
		t.Fatal(err)
	}
	return errs
}

// examples are the job specs of the repository: docs/JOBS.md's, the
// README's, every udfs/*/job.yaml and this package's fixtures, module id
// placeholders filled in.
func examples(t *testing.T) map[string]string {
	t.Helper()
	read := func(path string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", path))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	fill := strings.NewReplacer("${MODULE}", modA, "$MODULE", modA).Replace
	out := map[string]string{"designSpec": designSpec, "designJSON": designJSON, "minimalSpec": minimalSpec}
	for i, m := range regexp.MustCompile("(?s)```(?:yaml|json)\n(.*?)```").FindAllStringSubmatch(read("docs/JOBS.md"), -1) {
		out[fmt.Sprintf("docs/JOBS.md example %d", i+1)] = m[1]
	}
	readme := regexp.MustCompile(`(?s)cat > ([a-z]+\.yaml) <<EOF\n(.*?)\nEOF\n`).FindAllStringSubmatch(read("README.md"), -1)
	if len(readme) != 2 {
		t.Fatalf("README.md: found %d job specs, want 2", len(readme))
	}
	for _, m := range readme {
		out["README.md "+m[1]] = fill(m[2])
	}
	files, err := filepath.Glob("../../udfs/*/job.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("udfs/*/job.yaml: %v %d", err, len(files))
	}
	for _, f := range files {
		rel, _ := filepath.Rel("../..", f)
		out[rel] = fill(read(rel))
	}
	return out
}

// TestSchemaAcceptsExamples: every example parses and the schema accepts it.
func TestSchemaAcceptsExamples(t *testing.T) {
	ex := examples(t)
	if len(ex) < 15 {
		t.Fatalf("found %d examples, want at least 15", len(ex))
	}
	for name, spec := range ex {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse([]byte(spec)); err != nil {
				t.Errorf("Parse: %v", err)
			}
			if errs := validateSpec(t, []byte(spec)); len(errs) > 0 {
				t.Errorf("the schema rejects it:\n%s", strings.Join(errs, "\n"))
			}
		})
	}
}

// TestSchemaRejects: the schema rejects what Parse rejects for the shape of
// a spec, naming the same place.
func TestSchemaRejects(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		want       []string
	}{
		{"unknown field", minimalSpec + "colour: red\n", []string{`/colour: not allowed`}},
		{"unknown nested field", "name: j\n" + src + "sinks: [{id: out, input: src, discard: true, subject: x}]\n",
			[]string{`/sinks/0/subject: not allowed`}},
		{"wrong enum", minimalSpec + "time: wall\n",
			[]string{`/time: "wall" is not one of ["event", "processing", "ingestion"]`}},
		{"wrong nested enum", withOps("  - {id: op, input: src, key_by: {field: k}, window: {type: tumbing, size: 1m}, aggregate: {builtin: count}}\n"),
			[]string{`/operators/0/window/type: "tumbing" is not one of ["tumbling", "sliding", "session", "count", "global"]`}},
		{"bad duration", minimalSpec + "buffer_timeout: 5x\n",
			[]string{`/buffer_timeout: "5x" does not match ` + durationPattern}},
		{"bare number as a duration", minimalSpec + "buffer_timeout: 5\n", []string{`/buffer_timeout: want string, got integer`}},
		{"missing required", "sources: []\nsinks: [{input: src, discard: true}]\n",
			[]string{`/: "name" is required`, `/sinks/0: "id" is required`, `/sources: want at least 1 items, got 0`}},
		{"wrong type", minimalSpec + "parallelism: two\n", []string{`/parallelism: want integer, got string`}},
		{"bad module id", withOps("  - {id: op, input: src, map: {module: sha256:beef, function: f}}\n"),
			[]string{`/operators/0/map/module: "sha256:beef" does not match ` + moduleRefPattern}},
		{"bad module name", withOps("  - {id: op, input: src, map: {module: Words@0, function: f}}\n"),
			[]string{`/operators/0/map/module: "Words@0" does not match ` + moduleRefPattern}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse([]byte(tc.spec)); err == nil {
				t.Fatal("Parse accepts it")
			}
			if got := validateSpec(t, []byte(tc.spec)); !slices.Equal(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestSchemaEnumsAreTheValidators: for every field with an enum, Parse
// rejects another value with the same list.
func TestSchemaEnumsAreTheValidators(t *testing.T) {
	job := func(settings string) string { return minimalSpec + settings }
	op := func(fields string) string {
		return withOps("  - {id: op, input: src, " + fields + "}\n")
	}
	cases := []struct {
		typ   any
		field string
		spec  string
		path  string
	}{
		{Job{}, "time", job("time: x\n"), "time"},
		{OnUDFError{}, "policy", job("on_udf_error: x\n"), "on_udf_error"},
		{Job{}, "placement", job("placement: x\n"), "placement"},
		{StateBackend{}, "backend", job("state: {backend: x}\n"), "state.backend"},
		{Checkpoint{}, "mode", job("checkpoint: {interval: 1s, mode: x}\n"), "checkpoint.mode"},
		{Restart{}, "strategy", job("restart: {strategy: x}\n"), "restart.strategy"},
		{Generator{}, "kind", "name: j\nsources: [{id: src, generator: {kind: x}}]\n" + out, "sources[0].generator.kind"},
		{JSSource{}, "on_gap", "name: j\nsources: [{id: src, jetstream: {stream: S, on_gap: x}}]\n" + out, "sources[0].jetstream.on_gap"},
		{ObjectSink{}, "format", "name: j\ncheckpoint: {interval: 1s}\n" + src + "sinks: [{id: out, input: src, object_store: {bucket: B, format: x}}]\n", "sinks[0].object_store.format"},
		{Watermark{}, "strategy", "name: j\nsources: [{id: src, generator: {kind: sequence}, watermark: {strategy: x}}]\n" + out, "sources[0].watermark.strategy"},
		{Operator{}, "partition", op("partition: x, map: {module: " + modA + ", function: f}"), "operators[0].partition"},
		{Sink{}, "partition", "name: j\n" + src + "sinks: [{id: out, input: src, discard: true, partition: x}]\n", "sinks[0].partition"},
		{PrintSink{}, "format", "name: j\n" + src + "sinks: [{id: out, input: src, print: {format: x}}]\n", "sinks[0].print.format"},
		{Window{}, "type", op("key_by: {field: k}, window: {type: x}, aggregate: {builtin: count}"), "operators[0].window.type"},
		{Evictor{}, "type", op("key_by: {field: k}, window: {type: tumbling, size: 1m, evictor: {type: x}}, process_window: {module: " + modA + ", function: f}"), "operators[0].window.evictor.type"},
		{Trigger{}, "type", op("key_by: {field: k}, window: {type: tumbling, size: 1m, trigger: {type: x}}, aggregate: {builtin: count}"), "operators[0].window.trigger.type"},
		{Evictor{}, "when", op("key_by: {field: k}, window: {type: tumbling, size: 1m, evictor: {type: custom, module: " + modA + ", function: e, when: x}}, process_window: {module: " + modA + ", function: f}"), "operators[0].window.evictor.when"},
		{Aggregate{}, "builtin", op("key_by: {field: k}, window: {type: tumbling, size: 1m}, aggregate: {builtin: x}"), "operators[0].aggregate.builtin"},
		{StateTTL{}, "update_type", op("key_by: {field: k}, process: {module: " + modA + ", function: f}, state_ttl: [{state: s, ttl: 1s, update_type: x}]"), "operators[0].state_ttl[0].update_type"},
		{StateTTL{}, "visibility", op("key_by: {field: k}, process: {module: " + modA + ", function: f}, state_ttl: [{state: s, ttl: 1s, visibility: x}]"), "operators[0].state_ttl[0].visibility"},
	}
	n := 0
	for _, fields := range enums {
		n += len(fields)
	}
	if len(cases) != n {
		t.Fatalf("%d cases for %d enums", len(cases), n)
	}
	for _, tc := range cases {
		values := enums[reflect.TypeOf(tc.typ)][tc.field]
		if values == nil {
			t.Errorf("%T.%s has no enum", tc.typ, tc.field)
			continue
		}
		want := fmt.Sprintf(`must be one of %s; got "x"`, strings.Join(values, ", "))
		if got := problemAt(t, tc.spec, tc.path); got != want {
			t.Errorf("%s: got %q, want %q", tc.path, got, want)
		}
	}
}

// problemAt is the message of the problem Parse reports at path.
func problemAt(t *testing.T, spec, path string) string {
	t.Helper()
	_, err := Parse([]byte(spec))
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("Parse: got %v, want problems\n%s", err, spec)
	}
	for _, p := range e.Problems {
		if p.Path == path {
			return p.Message
		}
	}
	return "no problem at " + path + ": " + err.Error()
}

// TestSchemaRequiredFields: every property the schema requires, removed
// from an example that has it, makes Parse report a problem at or under it.
func TestSchemaRequiredFields(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal(JSONSchema(), &schema); err != nil {
		t.Fatal(err)
	}
	defs := schema["$defs"].(map[string]any)
	covered := map[string]bool{}
	for name, spec := range map[string]string{"designSpec": designSpec, "withWindowJoinAndState": kitchenSink} {
		var doc any
		if err := yaml.Unmarshal([]byte(spec), &doc); err != nil {
			t.Fatal(err)
		}
		var walk func(s map[string]any, def string, v any, path []any)
		walk = func(s map[string]any, def string, v any, path []any) {
			if ref, ok := s["$ref"].(string); ok {
				def = strings.TrimPrefix(ref, "#/$defs/")
				s = defs[def].(map[string]any)
			}
			switch v := v.(type) {
			case []any:
				for i, e := range v {
					walk(s["items"].(map[string]any), def, e, append(slices.Clip(path), i))
				}
			case map[string]any:
				req, _ := s["required"].([]any)
				for _, r := range req {
					if _, ok := v[r.(string)]; !ok {
						continue
					}
					covered[def+"."+r.(string)] = true
					p := append(slices.Clip(path), r.(string))
					if msg := removedProblem(t, doc, p); msg != "" {
						t.Errorf("%s: %s", name, msg)
					}
				}
				props := s["properties"].(map[string]any)
				for k, e := range v {
					walk(props[k].(map[string]any), def, e, append(slices.Clip(path), k))
				}
			}
		}
		walk(schema, "Job", doc, nil)
	}
	var all []string
	collect := func(def string, s map[string]any) {
		req, _ := s["required"].([]any)
		for _, r := range req {
			all = append(all, def+"."+r.(string))
		}
	}
	collect("Job", schema)
	for name, d := range defs {
		collect(name, d.(map[string]any))
	}
	for _, r := range all {
		if !covered[r] {
			t.Errorf("required %s: no example has it", r)
		}
	}
}

// kitchenSink has the required fields designSpec lacks.
const kitchenSink = `
name: all
checkpoint: {interval: 1s}
sources:
  - id: gen
    generator: {kind: clicks}
    watermark: {strategy: monotonous}
  - id: ref
    kv: {bucket: REF}
  - id: core
    nats: {subject: "in.>", allow_at_most_once: true}
  - id: script
    test_stream: {steps: [{record: {value: a, timestamp: 1}}, {watermark: 5}, {advance_processing_time: 1s}]}
operators:
  - {id: bids, input: gen, extract: {field: bid}}
  - id: look
    input: script
    async_lookup: {module: "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", bucket: USERS, function: join}
  - id: w
    join:
      left: {input: gen, key_by: {field: a}}
      right: {input: gen, key_by: {field: b}}
      window: {type: tumbling, size: 1m}
  - id: t
    input: w
    key_by: {field: k}
    window: {type: tumbling, size: 1m, trigger: {type: count, count: 3}}
    aggregate: {builtin: count}
  - id: e
    input: t
    key_by: {field: k}
    window: {type: global, trigger: {type: count, count: 2}, evictor: {type: count, max: 4}}
    process_window: {module: "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", function: w}
  - id: p
    input: e
    key_by: {field: k}
    process: {module: "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", function: f}
    state_ttl: [{state: s, ttl: 1h}]
  - id: b
    input: p
    key_by: {field: user}
    broadcast_process: {broadcast: ref, module: "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", process_element: m, process_broadcast: u}
sinks:
  - {id: out, input: b, discard: true}
  - {id: looked, input: look, discard: true}
  - {id: view, input: ref, kv: {bucket: VIEW}}
  - {id: fanout, input: core, nats: {subject: out, allow_at_most_once: true}}
  - {id: files, input: gen, object_store: {bucket: FILES}}
`

// removedProblem parses doc without the member at path and says what is
// wrong when Parse finds no problem at or under that path.
func removedProblem(t *testing.T, doc any, path []any) string {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var cp any
	if err := json.Unmarshal(b, &cp); err != nil {
		t.Fatal(err)
	}
	cur := cp
	var want strings.Builder
	for i, k := range path {
		switch k := k.(type) {
		case int:
			fmt.Fprintf(&want, "[%d]", k)
			cur = cur.([]any)[k]
		case string:
			if want.Len() > 0 {
				want.WriteByte('.')
			}
			want.WriteString(k)
			if i == len(path)-1 {
				delete(cur.(map[string]any), k)
			} else {
				cur = cur.(map[string]any)[k]
			}
		}
	}
	b, _ = json.Marshal(cp)
	_, err = Parse(b)
	e, ok := err.(*Error)
	if !ok {
		return fmt.Sprintf("without %s: Parse says %v", want.String(), err)
	}
	p := want.String()
	for _, q := range e.Problems {
		if q.Path == p || strings.HasPrefix(q.Path, p+".") || strings.HasPrefix(q.Path, p+"[") {
			return ""
		}
	}
	return fmt.Sprintf("without %s: no problem there, only %v", p, err)
}

// TestSchemaPatterns: the patterns accept what the validator accepts.
func TestSchemaPatterns(t *testing.T) {
	duration := regexp.MustCompile(durationPattern)
	for _, s := range []string{"0", "-0", "+0", "100ms", "5s", "1m30s", "-1ms", "1.5h", ".5s", "1.s", "2us", "3µs", "3μs", "1h2m3s4ms5us6ns",
		"", "5", "00", "5x", "s", "1 s", "-", "1.5", "ms1", "1sm", " 1s", "1s "} {
		_, err := time.ParseDuration(s)
		if got := duration.MatchString(s); got != (err == nil) {
			t.Errorf("duration %q: pattern says %v, time.ParseDuration %v", s, got, err)
		}
	}
	identifier := regexp.MustCompile(identifierPattern)
	for _, s := range []string{"a", "A-b_c.1", "", "a b", "a/b", "é", "a:b"} {
		if got := identifier.MatchString(s); got != isIdentifier(s) {
			t.Errorf("identifier %q: pattern says %v, isIdentifier %v", s, got, isIdentifier(s))
		}
	}
	module := regexp.MustCompile(moduleRefPattern)
	for _, s := range []string{modA, modB, "sha256:" + strings.Repeat("A", 64), "sha256:" + strings.Repeat("a", 63), "sha1:" + strings.Repeat("a", 64), modA + "a",
		"words", "words@1", "words@12", "w", "0", "9-a_b", "a@999999999", strings.Repeat("a", 63), strings.Repeat("a", 64), "a@1000000000",
		"", "@1", "words@", "words@0", "words@01", "words@-1", "Words", "_a", "-a", "a.b", "a@1@2", "a@b", "sha256", "a b"} {
		if got := module.MatchString(s); got != isModuleRef(s) {
			t.Errorf("module %q: pattern says %v, isModuleRef %v", s, got, isModuleRef(s))
		}
	}
	for s, want := range map[string]bool{modA: true, "words": true, "words@2": true, strings.Repeat("a", 63) + "@999999999": true,
		strings.Repeat("a", 64): false, "words@0": false, "Words": false, "sha256:beef": false} {
		if got := isModuleRef(s); got != want {
			t.Errorf("isModuleRef(%q) = %v, want %v", s, got, want)
		}
	}
}
