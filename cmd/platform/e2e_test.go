package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

// textLines makes n deterministic lines with mixed case, digits, punctuation
// and non-ASCII letters.
func textLines(n int) [][]byte {
	words := []string{"Stream", "wasm", "Flink", "nats", "JetStream", "key", "Window", "état", "größe", "2024", "x1", "naïve", "über", "zürich"}
	seps := []string{" ", ", ", "; ", "! ", " -- ", "\t", "...", " (", ") "}
	rng := rand.New(rand.NewSource(42))
	lines := make([][]byte, n)
	for i := range lines {
		var b strings.Builder
		for w := 0; w < 3+rng.Intn(8); w++ {
			b.WriteString(words[rng.Intn(len(words))])
			b.WriteString(seps[rng.Intn(len(seps))])
		}
		lines[i] = []byte(b.String())
	}
	return lines
}

// referenceSplit is the word splitting rule of udfs/wordcount, written again
// here so the test can tell what the output must be.
func referenceSplit(line string) []string {
	return strings.FieldsFunc(strings.ToLower(line), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func TestWordCountEndToEnd(t *testing.T) {
	ts := startTestServer(t)
	id := ts.upload(wasmbuild.UDF(t, "wordcount"))
	lines := textLines(100_000)
	ts.stream("TEXT", []string{"text.a", "text.b", "text.c"}, lines)
	ts.stream("WORDS", []string{"words"}, nil)

	job := ts.submit(fmt.Sprintf(`
name: wordcount
parallelism: 2
sources:
  - id: lines
    jetstream: {stream: TEXT, subjects: [text.a, text.b, text.c], bounded: true}
operators:
  - id: split
    input: lines
    flat_map: {module: %s, function: split}
sinks:
  - id: out
    input: split
    jetstream: {subject: words}
`, id))
	info := ts.wait(job)
	if info.State != runtime.StateFinished {
		t.Fatalf("job %s: %s", info.State, info.Failure)
	}

	want := map[string]int{}
	total := 0
	for _, l := range lines {
		for _, w := range referenceSplit(string(l)) {
			want[w]++
			total++
		}
	}
	got := map[string]int{}
	for _, m := range ts.read("WORDS") {
		if key := m.Headers().Get("Platform-Key"); key != string(m.Data()) {
			t.Fatalf("Platform-Key %q for word %q", key, m.Data())
		}
		if m.Headers().Get("Platform-Timestamp") == "" {
			t.Fatal("Platform-Timestamp missing")
		}
		got[string(m.Data())]++
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("words differ: got %d distinct, want %d distinct (%d words)", len(got), len(want), total)
	}
	vertices := map[string]runtime.VertexInfo{}
	for _, v := range info.Vertices {
		vertices[v.ID] = v
	}
	if vertices["lines"].RecordsOut != int64(len(lines)) || vertices["split"].RecordsIn != int64(len(lines)) ||
		vertices["split"].RecordsOut != int64(total) || vertices["out"].RecordsIn != int64(total) {
		t.Fatalf("vertex counts: %+v (lines %d, words %d)", info.Vertices, len(lines), total)
	}
}

// problem is the part of an application/problem+json answer the tests read.
type problem struct {
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Problems []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"problems"`
}

func TestBadInputIsRejectedWithTheReason(t *testing.T) {
	ts := startTestServer(t)
	wordcount := ts.upload(wasmbuild.UDF(t, "wordcount"))
	ts.stream("IN", []string{"in"}, nil)
	ts.stream("OUT", []string{"out"}, nil)
	forbidden := wasmbuild.Dir(t, "testdata/forbidden")

	tests := []struct {
		name        string
		path        string
		contentType string
		body        []byte
		status      int
		mentions    []string
	}{
		{"invalid wasm", "/v1/modules", "application/wasm", []byte("not a module"), http.StatusBadRequest, []string{"invalid module"}},
		{"forbidden imports", "/v1/modules", "application/wasm", forbidden, http.StatusBadRequest, []string{"env.system", "wasi_snapshot_preview1.sock_accept"}},
		{"oversized upload", "/v1/modules", "application/wasm", make([]byte, 65<<20), http.StatusRequestEntityTooLarge, []string{"limit"}},
		{"missing function", "/v1/jobs", "application/yaml", []byte(fmt.Sprintf(`
name: missing
sources: [{id: in, jetstream: {stream: IN}}]
operators: [{id: m, input: in, map: {module: %s, function: nope}}]
sinks: [{id: out, input: m, jetstream: {subject: out}}]
`, wordcount)), http.StatusBadRequest, []string{"operators[0].map.function", "nope", "split (flat_map)"}},
		{"wrong function kind", "/v1/jobs", "application/yaml", []byte(fmt.Sprintf(`
name: wrongkind
sources: [{id: in, jetstream: {stream: IN}}]
operators: [{id: m, input: in, map: {module: %s, function: split}}]
sinks: [{id: out, input: m, jetstream: {subject: out}}]
`, wordcount)), http.StatusBadRequest, []string{"operators[0].map.function", "flat_map"}},
		{"malformed spec", "/v1/jobs", "application/yaml", []byte(`
name: bad
sources: [{id: in, jetstream: {stream: IN}}]
operators: [{id: m, input: in, window: {type: tumbling, size: 5x}}]
sinks: [{id: out, input: m, jetstream: {subject: out}, colour: blue}]
`), http.StatusBadRequest, []string{"operators[0].window.size", "sinks[0].colour"}},
		{"missing stream", "/v1/jobs", "application/yaml", []byte(`
name: nostream
sources: [{id: in, jetstream: {stream: NOPE}}]
sinks: [{id: out, input: in, jetstream: {subject: out}}]
`), http.StatusBadRequest, []string{"sources[0].jetstream.stream", "NOPE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := ts.call(http.MethodPost, tt.path, tt.contentType, tt.body)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, body)
			}
			var p problem
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatalf("not problem+json: %s", body)
			}
			text := string(body)
			for _, m := range tt.mentions {
				if !strings.Contains(text, m) {
					t.Errorf("answer does not mention %q: %s", m, text)
				}
			}
		})
	}
}
