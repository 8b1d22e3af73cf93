package main

import (
	"bytes"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

// language is a language of the conformance UDFs and the suffix of their
// directories: udfs/wordcount is Go, udfs/wordcount-rust Rust, and so on.
type language struct{ name, suffix string }

// conformanceLanguages are the languages with an SDK; Go's output is the
// reference.
var conformanceLanguages = []language{{"go", ""}, {"rust", "-rust"}, {"c", "-c"}, {"assemblyscript", "-as"}}

// conformanceUDF is one UDF of the conformance suite: the job that runs it
// over the same input in every language.
type conformanceUDF struct {
	// dir is the Go module's directory under udfs/.
	dir string
	// input is the payloads published to the source stream.
	input [][]byte
	// source is more of the source's spec, after its stream.
	source string
	// operators is the job's operators, formatted with the module id; the
	// last one's id is "udf".
	operators string
	// languages are the languages the UDF is written in, Go first;
	// nil is conformanceLanguages.
	languages []language
}

// wordcountInput is n lines of words in many scripts and the cases where
// Unicode implementations differ: full versus simple case mapping (İ, ẞ,
// final sigma), letters versus alphabetic marks (Devanagari vowel signs),
// digits versus other numbers (Roman numerals, superscripts), and invalid
// UTF-8.
func wordcountInput(n int) [][]byte {
	words := []string{
		"Stream", "WASM", "état", "Größe", "İstanbul", "ΣΟΦΊΑ", "ὈΔΥΣΣΕΎΣ", "हिन्दी", "٣٤٥", "日本語のテキスト",
		"Ⅻ", "x²", "ǅungla", "ﬁne", "ẞtraße", "Ωmega", "ⓐⓑ", "𝐀𝐁", "𐐀𐐨", "naïve", "x1", "2024",
		"caf\u0065\u0301", "\xff\xfe", "ab\xe2\x82", "\xed\xa0\x80",
	}
	seps := []string{" ", ", ", "; ", "! ", " -- ", "\t", "...", " (", ") ", "\u00a0", "\u3000", "_", "'"}
	rng := rand.New(rand.NewSource(7))
	lines := make([][]byte, n)
	for i := range lines {
		var b strings.Builder
		for range 2 + rng.Intn(9) {
			b.WriteString(words[rng.Intn(len(words))])
			b.WriteString(seps[rng.Intn(len(seps))])
		}
		lines[i] = []byte(b.String())
	}
	return lines
}

// dedupInput is n JSON events whose ids repeat, with headers on some.
func dedupInput(n int) [][]byte {
	rng := rand.New(rand.NewSource(11))
	events := make([][]byte, n)
	for i := range events {
		events[i] = fmt.Appendf(nil, `{"id":"e%d","seq":%d,"ts":%d}`, rng.Intn(n/4), i, 1700000000000+int64(i)*1000)
	}
	return events
}

// avgInput is n JSON clicks of 5 users with integer amounts, out of order by
// up to half a second.
func avgInput(n int) [][]byte {
	rng := rand.New(rand.NewSource(3))
	clicks := make([][]byte, n)
	for i := range clicks {
		ts := 1_700_000_000_000 + int64(i)*37 - int64(rng.Intn(500))
		clicks[i] = fmt.Appendf(nil, `{"user":"u%d","page":"/p","amount":%d,"ts":%d}`, rng.Intn(5), rng.Intn(1000), ts)
	}
	return clicks
}

// conformanceUDFs are the UDFs every language implements with the same
// function names.
var conformanceUDFs = []conformanceUDF{
	{
		dir:   "wordcount",
		input: wordcountInput(5000),
		operators: `
  - id: udf
    input: in
    flat_map: {module: %s, function: split}`,
	},
	{
		dir:       "dedup",
		input:     dedupInput(4000),
		source:    ", timestamp: {field: ts}",
		languages: append(conformanceLanguages, language{"wat", "-wat"}),
		operators: `
  - id: udf
    input: in
    key_by: {field: id}
    process: {module: %s, function: dedup}`,
	},
	{
		dir:    "avg",
		input:  avgInput(4000),
		source: ", timestamp: {field: ts}, watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 1s, interval: 0s}",
		operators: `
  - id: udf
    input: in
    key_by: {field: user}
    window: {type: tumbling, size: 10s}
    aggregate: {module: %s, function: avg}`,
	},
}

// TestConformance runs each conformance UDF in every language through the
// platform, over the same input, and checks that the sink output is byte for
// byte the Go module's: the same messages, in the same order, with the same
// headers.
func TestConformance(t *testing.T) {
	ts := startTestServer(t)
	for u, udf := range conformanceUDFs {
		t.Run(udf.dir, func(t *testing.T) {
			in := fmt.Sprintf("CONF_IN_%d", u)
			ts.stream(in, []string{fmt.Sprintf("conf.in.%d", u)}, udf.input)
			var want []string
			languages := udf.languages
			if languages == nil {
				languages = conformanceLanguages
			}
			for l, lang := range languages {
				module := ts.upload(wasmbuild.UDF(t, udf.dir+lang.suffix))
				out := fmt.Sprintf("CONF_OUT_%d_%d", u, l)
				subject := fmt.Sprintf("conf.out.%d.%d", u, l)
				ts.stream(out, []string{subject}, nil)
				job := ts.submit(fmt.Sprintf(`
name: conformance-%s-%s
parallelism: 1
sources: [{id: in, jetstream: {stream: %s, bounded: true}%s}]
operators:%s
sinks: [{id: out, input: udf, jetstream: {subject: %s}}]
`, udf.dir, lang.name, in, udf.source, fmt.Sprintf(udf.operators, module), subject))
				if info := ts.wait(job); info.State != runtime.StateFinished {
					t.Fatalf("%s: job %s: %s", lang.name, info.State, info.Failure)
				}
				got := sinkOutput(ts.read(out))
				if l == 0 {
					if len(got) == 0 {
						t.Fatal("go: no output")
					}
					want = got
					continue
				}
				if !slices.Equal(got, want) {
					i := 0
					for i < min(len(got), len(want)) && got[i] == want[i] {
						i++
					}
					t.Errorf("%s: %d messages, want %d as go's; message %d differs:\n got  %q\n want %q",
						lang.name, len(got), len(want), i, at(got, i), at(want, i))
				}
			}
		})
	}
}

// sinkOutput renders each message as its payload and its headers, sorted by
// name, byte for byte.
func sinkOutput(msgs []jetstream.Msg) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		var b bytes.Buffer
		names := make([]string, 0, len(m.Headers()))
		for name := range m.Headers() {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			fmt.Fprintf(&b, "%s: %q\n", name, m.Headers()[name])
		}
		fmt.Fprintf(&b, "%q", m.Data())
		out[i] = b.String()
	}
	return out
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(none)"
}
