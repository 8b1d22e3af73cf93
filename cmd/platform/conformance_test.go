package main

import (
	"bytes"
	"context"
	"encoding/json"
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
	// subjects, when set, are the source stream's subjects after its
	// prefix, and subject picks each input's; sources is then the job's
	// sources, formatted with the stream and the subject prefix.
	subjects []string
	subject  func(i int) string
	sources  string
	// perKey compares the outputs in order per key only: a keyed
	// process function gets each batch grouped by key, so the order across
	// keys follows the batches' boundaries, which vary from run to run.
	perKey bool
	// unordered compares the sorted outputs: an operator with two inputs
	// emits in the order their records interleave, which varies from run
	// to run, while every message stays byte-identical.
	unordered bool
	// reference, when set, is the payloads the Go module must emit, in any
	// order.
	reference func() []string
	// sides are side outputs of the operator "udf" that the job routes to
	// sinks of their own, each compared as the main output is.
	sides []string
	// setup, when set, prepares what the jobs read besides their input
	// (a KV bucket of lookups), once for every language.
	setup func(ts *testServer)
	// with, when set, is a udfs/ directory whose module every language's
	// job uses as well (a window function beside an evictor): operators
	// is then formatted with the module under test and this one.
	with string
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

// enrichInput is n orders and profiles of 7 users, in timestamp order,
// every fifth a profile. Every profile has a tier: a failing pair fails its
// whole group, and an interval join's groups depend on how its inputs
// interleave, so an error would make the output differ between runs.
func enrichInput(n int) (payloads [][]byte, subjects []string) {
	rng := rand.New(rand.NewSource(13))
	tiers := []string{"gold", "silver", "bronze"}
	for i := range n {
		ts := 1_700_000_000_000 + int64(i)*250
		user := rng.Intn(7)
		if i%5 == 0 {
			payloads = append(payloads, fmt.Appendf(nil, `{"user":"u%d","tier":"%s","ts":%d}`, user, tiers[rng.Intn(len(tiers))], ts))
			subjects = append(subjects, "profiles")
			continue
		}
		payloads = append(payloads, fmt.Appendf(nil, `{"order":"o%d","user":"u%d","amount":%d,"ts":%d}`, i, user, rng.Intn(500), ts))
		subjects = append(subjects, "orders")
	}
	return payloads, subjects
}

var enrichPayloads, enrichSubjects = enrichInput(3000)

// enrichReference is the nested-loop interval join of enrichInput: every
// order with every profile of its user that has a tier and is at most 30 s
// older.
func enrichReference() []string {
	type event struct {
		User, Tier string
		TS         int64
	}
	parse := func(p []byte) event {
		var e event
		if err := json.Unmarshal(p, &e); err != nil {
			panic(err)
		}
		return e
	}
	events := make([]event, len(enrichPayloads))
	for i, p := range enrichPayloads {
		events[i] = parse(p)
	}
	var out []string
	for i, order := range events {
		if enrichSubjects[i] != "orders" {
			continue
		}
		for j, profile := range events {
			if enrichSubjects[j] == "profiles" && profile.User == order.User &&
				profile.TS >= order.TS-30_000 && profile.TS <= order.TS {
				out = append(out, fmt.Sprintf(`{"order":%s,"tier":"%s"}`, enrichPayloads[i], profile.Tier))
			}
		}
	}
	return out
}

// firingsInput is n JSON clicks of 5 users, 100 ms apart; every 17th is
// 4 s late, within the allowed lateness, and fires its window again; every
// 41st is 8 s late, too late for some windows.
func firingsInput(n int) [][]byte {
	clicks := make([][]byte, n)
	for i := range clicks {
		ts := 1_700_000_000_000 + int64(i)*100
		switch {
		case i%41 == 40:
			ts -= 8000
		case i%17 == 16:
			ts -= 4000
		}
		clicks[i] = fmt.Appendf(nil, `{"user":"u%d","ts":%d}`, i%5, ts)
	}
	return clicks
}

// triggerInput is firingsInput's clicks, every thirteenth of them urgent.
func triggerInput(n int) [][]byte {
	clicks := firingsInput(n)
	for i := 12; i < n; i += 13 {
		clicks[i] = append(bytes.TrimSuffix(clicks[i], []byte("}")), `,"urgent":true}`...)
	}
	return clicks
}

// evictorInput is n JSON records of 4 keys, 100 ms apart and out of order
// by up to half a second, each with an integer n from -50 to 49, so that an
// evictor keeping those within 10 of the newest keeps some and evicts some.
func evictorInput(n int) [][]byte {
	rng := rand.New(rand.NewSource(17))
	recs := make([][]byte, n)
	for i := range recs {
		ts := 1_700_000_000_000 + int64(i)*100 - int64(rng.Intn(500))
		recs[i] = fmt.Appendf(nil, `{"k":"k%d","n":%d,"ts":%d}`, rng.Intn(4), rng.Intn(100)-50, ts)
	}
	return recs
}

// triageInput is n JSON orders of 6 users: amounts from 0 to 1199 (900
// and above are large), and every 13th without a readable amount.
func triageInput(n int) [][]byte {
	rng := rand.New(rand.NewSource(17))
	orders := make([][]byte, n)
	for i := range orders {
		amount := fmt.Sprint(rng.Intn(1200))
		if i%13 == 12 {
			amount = `"n/a"`
		}
		orders[i] = fmt.Appendf(nil, `{"order":"o%d","user":"u%d","amount":%s,"ts":%d}`, i, rng.Intn(6), amount, 1_700_000_000_000+int64(i)*10)
	}
	return orders
}

// lookupInput is n orders of users u0 to u11, of whom the KV bucket users
// (lookupProfiles) holds u0 to u8: the others' orders get a null profile.
func lookupInput(n int) [][]byte {
	rng := rand.New(rand.NewSource(23))
	orders := make([][]byte, n)
	for i := range orders {
		orders[i] = fmt.Appendf(nil, `{"order":"o%d","user":"u%d","amount":%d}`, i, rng.Intn(12), rng.Intn(500))
	}
	return orders
}

// lookupProfiles puts the profiles of users u0 to u8 in the KV bucket
// users, some with escapes and characters beyond ASCII.
func lookupProfiles(ts *testServer) {
	ctx := context.Background()
	kv, err := ts.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "users", Storage: jetstream.FileStorage})
	if err != nil {
		ts.t.Fatal(err)
	}
	for i := range 9 {
		if _, err := kv.PutString(ctx, fmt.Sprintf("u%d", i), lookupProfile(i)); err != nil {
			ts.t.Fatal(err)
		}
	}
}

// lookupProfile is the profile of user u<i> in the bucket users.
func lookupProfile(i int) string {
	return fmt.Sprintf(`{"name":"user %d","tier":%q,"note":"caf\u00e9 ☕ \"%d\""}`, i, []string{"gold", "blue", "grün"}[i%3], i)
}

// lookupReference is what udfs/lookup's join emits for lookupInput: each
// order with its user's profile, or null.
func lookupReference() []string {
	var want []string
	for _, order := range lookupInput(3000) {
		var o struct{ User string }
		if err := json.Unmarshal(order, &o); err != nil {
			panic(err)
		}
		profile := "null"
		if len(o.User) == 2 && o.User[1] < '9' {
			profile = lookupProfile(int(o.User[1] - '0'))
		}
		want = append(want, fmt.Sprintf(`{"order":%s,"profile":%s}`, order, profile))
	}
	return want
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
		perKey:    true,
		operators: `
  - id: udf
    input: in
    key_by: {field: id}
    process: {module: %s, function: dedup}`,
	},
	{
		dir:    "triage",
		input:  triageInput(3000),
		source: ", timestamp: {field: ts}",
		perKey: true,
		sides:  []string{"large", "invalid"},
		operators: `
  - id: udf
    input: in
    key_by: {field: user}
    process: {module: %s, function: triage}
    side_outputs: [large, invalid]`,
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
	{
		dir:    "firings",
		input:  firingsInput(3000),
		source: ", timestamp: {field: ts}, watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 1s, interval: 0s}",
		operators: `
  - id: udf
    input: in
    key_by: {field: user}
    window: {type: tumbling, size: 5s}
    allowed_lateness: 5s
    process_window: {module: %s, function: count}`,
	},
	{
		// A custom trigger fires a window early on an urgent click and at
		// its end; which of a key's windows fires first depends on where
		// the batches end, so the firings are compared sorted.
		dir:       "trigger",
		input:     triggerInput(3000),
		languages: []language{{"go", ""}, {"rust", "-rust"}},
		unordered: true,
		source:    ", timestamp: {field: ts}, watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 1s, interval: 0s}",
		operators: `
  - id: udf
    input: in
    key_by: {field: user}
    window: {type: tumbling, size: 5s, trigger: {type: custom, module: %s, function: early}}
    aggregate: {builtin: count}`,
	},
	{
		// A custom evictor keeps the records near the newest before the
		// window function (one C module for every language) sees them.
		dir:       "evictor",
		input:     evictorInput(3000),
		languages: []language{{"go", ""}, {"c", "-c"}, {"assemblyscript", "-as"}},
		with:      "windowkinds-c",
		source:    ", timestamp: {field: ts}, watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 1s, interval: 0s}",
		operators: `
  - id: udf
    input: in
    key_by: {field: k}
    window: {type: tumbling, size: 5s, evictor: {type: custom, module: %[1]s, function: near_newest}}
    process_window: {module: %[2]s, function: summary}`,
	},
	{
		// Ordered results keep the input's order, whatever order the
		// lookups complete in.
		dir:       "lookup",
		input:     lookupInput(3000),
		setup:     lookupProfiles,
		reference: lookupReference,
		operators: `
  - id: udf
    input: in
    async_lookup: {module: %s, request: ask_kv, function: join, capacity: 16, output: ordered}`,
	},
	{
		dir:       "enrich",
		input:     enrichPayloads,
		subjects:  []string{"orders", "profiles"},
		subject:   func(i int) string { return enrichSubjects[i] },
		unordered: true,
		reference: enrichReference,
		sources: `
  - {id: orders, jetstream: {stream: %[1]s, subjects: [%[2]s.orders], bounded: true}, timestamp: {field: ts}, watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 1s, interval: 0s}}
  - {id: profiles, jetstream: {stream: %[1]s, subjects: [%[2]s.profiles], bounded: true}, timestamp: {field: ts}, watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 1s, interval: 0s}}`,
		operators: `
  - id: udf
    join:
      left: {input: orders, key_by: {field: user}}
      right: {input: profiles, key_by: {field: user}}
      interval: {lower: -30s, upper: 0s}
      function: {module: %s, function: enrich}`,
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
			in, prefix := fmt.Sprintf("CONF_IN_%d", u), fmt.Sprintf("conf.in.%d", u)
			sources := fmt.Sprintf("\n  - {id: in, jetstream: {stream: %s, bounded: true}%s}", in, udf.source)
			if udf.subjects == nil {
				ts.stream(in, []string{prefix}, udf.input)
			} else {
				subjects := make([]string, len(udf.subjects))
				for i, s := range udf.subjects {
					subjects[i] = prefix + "." + s
				}
				ts.publishBy(in, subjects, udf.input, func(i int) string { return prefix + "." + udf.subject(i) })
				sources = fmt.Sprintf(udf.sources, in, prefix)
			}
			if udf.setup != nil {
				udf.setup(ts)
			}
			outputs := append([]string{"udf"}, udf.sides...)
			want := make([][]string, len(outputs))
			languages := udf.languages
			if languages == nil {
				languages = conformanceLanguages
			}
			var with []any
			if udf.with != "" {
				with = append(with, ts.upload(wasmbuild.UDF(t, udf.with)))
			}
			for l, lang := range languages {
				module := ts.upload(wasmbuild.UDF(t, udf.dir+lang.suffix))
				streams := make([]string, len(outputs))
				var sinks strings.Builder
				for k, output := range outputs {
					input := output
					if k > 0 {
						input = "udf." + output
					}
					streams[k] = fmt.Sprintf("CONF_OUT_%d_%d_%d", u, l, k)
					subject := fmt.Sprintf("conf.out.%d.%d.%d", u, l, k)
					ts.stream(streams[k], []string{subject}, nil)
					fmt.Fprintf(&sinks, "\n  - {id: out%d, input: %s, jetstream: {subject: %s}}", k, input, subject)
				}
				job := ts.submit(fmt.Sprintf(`
name: conformance-%s-%s
parallelism: 1
sources:%s
operators:%s
sinks:%s
`, udf.dir, lang.name, sources, fmt.Sprintf(udf.operators, append([]any{module}, with...)...), sinks.String()))
				if info := ts.wait(job); info.State != runtime.StateFinished {
					t.Fatalf("%s: job %s: %s", lang.name, info.State, info.Failure)
				}
				for k, output := range outputs {
					got := sinkOutput(ts.read(streams[k]))
					switch {
					case udf.unordered:
						slices.Sort(got)
					case udf.perKey:
						slices.SortStableFunc(got, func(a, b string) int { return strings.Compare(keyLine(a), keyLine(b)) })
					}
					if l == 0 {
						if len(got) == 0 {
							t.Fatalf("go: no output on %s", output)
						}
						if udf.reference != nil && k == 0 {
							checkReference(t, ts.read(streams[k]), udf.reference())
						}
						want[k] = got
						continue
					}
					if !slices.Equal(got, want[k]) {
						i := 0
						for i < min(len(got), len(want[k])) && got[i] == want[k][i] {
							i++
						}
						t.Errorf("%s: %s: %d messages, want %d as go's; message %d differs:\n got  %q\n want %q",
							lang.name, output, len(got), len(want[k]), i, at(got, i), at(want[k], i))
					}
				}
			}
		})
	}
}

// checkReference checks that msgs hold exactly the payloads want, in any
// order.
func checkReference(t *testing.T, msgs []jetstream.Msg, want []string) {
	t.Helper()
	got := make([]string, len(msgs))
	for i, m := range msgs {
		got[i] = string(m.Data())
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("go: %d messages, want %d of the reference", len(got), len(want))
	}
}

// keyLine is the Platform-Key line of a rendered message.
func keyLine(msg string) string {
	for line := range strings.Lines(msg) {
		if strings.HasPrefix(line, "Platform-Key: ") {
			return line
		}
	}
	return ""
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
