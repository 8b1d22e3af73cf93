package spec

import (
	"errors"
	"slices"
	"testing"
)

// src and out complete specs whose cases are about other parts.
const (
	src = "sources: [{id: src, generator: {kind: sequence}}]\n"
	out = "sinks: [{id: out, input: src, discard: true}]\n"
)

// invalidSpecs fail with problems at exactly these paths.
var invalidSpecs = []struct {
	name  string
	spec  string
	paths []string
}{
	// Syntax and shape.
	{"empty", "", []string{""}},
	{"only a comment", "# nothing\n", []string{""}},
	{"null document", "~\n", []string{""}},
	{"bad yaml", "name: [\n", []string{""}},
	{"two documents", minimalSpec + "---\nname: k\n", []string{""}},
	{"bad json", `{"name": }`, []string{""}},
	{"truncated json", `{"name": "j"`, []string{""}},
	{"json trailing data", `{"name": "j"} x`, []string{""}},
	{"json nested too deeply", `{"a": ` + repeat("[", 40) + repeat("]", 40) + `}`, []string{""}},
	{"not an object", "[1, 2]\n", []string{""}},

	// Decoding.
	{"unknown fields", "nmae: j\n" + src + "sinks: [{id: out, input: src, discard: true, subject: x}]\n",
		[]string{"nmae", "name", "sinks[0].subject"}},
	{"duplicate keys", minimalSpec + "name: k\nudf: {batch_size: 1, batch_size: 2}\n",
		[]string{"name", "udf.batch_size"}},
	{"json duplicate keys", `{"name": "j", "name": "k", "sources": [{"id": "src", "generator": {"kind": "sequence"}}],
		"sinks": [{"id": "out", "input": "src", "discard": true}]}`, []string{"name"}},
	{"wrong types", "name: 1\nparallelism: two\nsources: {id: src}\n" +
		"sinks: [{id: out, input: src, discard: yes}, [x]]\n" + "checkpoint: {interval: 1s, unaligned: 1}\n",
		[]string{"name", "parallelism", "sources", "sinks[0].discard", "sinks[1]", "checkpoint.unaligned",
			"sinks[0].input"}},
	{"bad durations", minimalSpec + "buffer_timeout: 5x\nudf: {call_timeout: 10}\n",
		[]string{"buffer_timeout", "udf.call_timeout"}},
	{"bad integers", minimalSpec + "parallelism: 1.5\nmax_parallelism: 99999999999999999999\n",
		[]string{"parallelism", "max_parallelism"}},
	{"json integer out of range", `{"name": "j", "max_parallelism": 99999999999999999999, "parallelism": 2.0,
		"sources": [{"id": "src", "generator": {"kind": "sequence"}}],
		"sinks": [{"id": "out", "input": "src", "discard": true}]}`, []string{"max_parallelism", "parallelism"}},
	{"null list element", "name: j\nsources: [null]\n" + out, []string{"sources[0]", "sinks[0].input"}},
	{"non-string key", minimalSpec + "[a]: b\n", []string{""}},
	{"custom tag", "name: !custom j\n" + src + out, []string{"name"}},

	// Job settings.
	{"name missing", src + out, []string{"name"}},
	{"name unsafe", "name: a/b\n" + src + out, []string{"name"}},
	{"parallelism out of range", minimalSpec + "parallelism: 0\nmax_parallelism: 40000\n",
		[]string{"parallelism", "max_parallelism"}},
	{"parallelism above max", minimalSpec + "parallelism: 9\nmax_parallelism: 8\n", []string{"parallelism"}},
	{"bad enums", minimalSpec + "time: wall\non_udf_error: ignore\nstate: {backend: disk}\n",
		[]string{"time", "on_udf_error", "state.backend"}},
	{"dead letter without subject", minimalSpec + "on_udf_error: dead_letter\n", []string{"dead_letter_subject"}},
	{"quarantine without after or subject", minimalSpec + "on_udf_error: {policy: quarantine, budget: -1}\n",
		[]string{"on_udf_error.after", "on_udf_error.budget", "dead_letter_subject"}},
	{"after outside quarantine", minimalSpec + "on_udf_error: {policy: skip, after: 3, budget: 10}\n",
		[]string{"on_udf_error.after", "on_udf_error.budget"}},
	{"on_udf_error object unknown field", minimalSpec + "on_udf_error: {policy: quarantine, after: 2, afterwards: 1}\ndead_letter_subject: d\n",
		[]string{"on_udf_error.afterwards"}},
	{"subject without dead letter", minimalSpec + "dead_letter_subject: a.b\n", []string{"dead_letter_subject"}},
	{"dead letter wildcard", minimalSpec + "on_udf_error: dead_letter\ndead_letter_subject: a.>\n",
		[]string{"dead_letter_subject"}},
	{"udf limits low", minimalSpec + "udf: {memory_limit: 0, call_timeout: 0s, batch_size: 0}\n",
		[]string{"udf.memory_limit", "udf.call_timeout", "udf.batch_size"}},
	{"udf limits high", minimalSpec + "udf: {memory_limit: 8589934592, call_timeout: -1s, batch_size: 65537}\n",
		[]string{"udf.memory_limit", "udf.call_timeout", "udf.batch_size"}},
	{"udf memory not in pages", minimalSpec + "udf: {memory_limit: 100000}\n", []string{"udf.memory_limit"}},
	{"checkpoint", minimalSpec + "checkpoint: {mode: twice, timeout: 0s, min_pause: -1s, retain: 0}\n",
		[]string{"checkpoint.interval", "checkpoint.mode", "checkpoint.timeout", "checkpoint.min_pause", "checkpoint.retain"}},
	{"restart", minimalSpec + "restart: {strategy: forever, max_attempts: -1, delay: -1s, max_delay: -1s}\nstate: {budget: -1}\n",
		[]string{"restart.strategy", "restart.max_attempts", "restart.delay", "restart.max_delay", "state.budget"}},
	{"exponential delays", minimalSpec + "restart: {strategy: exponential, delay: 10s, max_delay: 1s}\n",
		[]string{"restart.max_delay"}},
	{"exponential growth", minimalSpec + "restart: {strategy: exponential, multiplier: 0.5, jitter: 1.5, reset_after: -1s}\n",
		[]string{"restart.reset_after", "restart.multiplier", "restart.jitter"}},
	{"failure rate", minimalSpec + "restart: {strategy: failure_rate, max_attempts: 3, max_failures_per_interval: 0, interval: 0s}\n",
		[]string{"restart.max_attempts", "restart.max_failures_per_interval", "restart.interval"}},
	{"jitter outside exponential", minimalSpec + "restart: {strategy: fixed_delay, jitter: 0.1}\n",
		[]string{"restart.jitter"}},

	// Vertices.
	{"no sources or sinks", "name: j\nsources: []\n", []string{"sources", "sinks"}},
	{"ids", "name: j\nsources: [{generator: {kind: sequence}}, {id: 'a b', generator: {kind: sequence}}, {id: x, generator: {kind: sequence}}]\n" +
		"sinks: [{id: x, input: x, discard: true}]\n",
		[]string{"sources[0].id", "sources[1].id", "sinks[0].id"}},
	{"vertex parallelism", "name: j\nmax_parallelism: 4\nsources: [{id: src, parallelism: 0, generator: {kind: sequence}}]\n" +
		"sinks: [{id: out, input: src, parallelism: 5, discard: true}]\n",
		[]string{"sources[0].parallelism", "sinks[0].parallelism"}},
	{"source kinds", "name: j\nsources: [{id: a}, {id: b, generator: {kind: clicks}, jetstream: {stream: S}}]\n" +
		"sinks: [{id: out, input: a, discard: true}]\n", []string{"sources[0]", "sources[1]"}},
	{"jetstream source", "name: j\nsources: [{id: a, jetstream: {subjects: ['a..b', 'a.>.b', 'a b', 'a.*']}}, {id: b, jetstream: {stream: S.1}}]\n" +
		"sinks: [{id: out, input: a, discard: true}]\n",
		[]string{"sources[0].jetstream.stream", "sources[0].jetstream.subjects[0]", "sources[0].jetstream.subjects[1]",
			"sources[0].jetstream.subjects[2]", "sources[1].jetstream.stream"}},
	{"generator", "name: j\nsources: [{id: src, generator: {kind: random, rate: -1, count: -1, keys: 0}}]\n" + out,
		[]string{"sources[0].generator.kind", "sources[0].generator.rate", "sources[0].generator.count", "sources[0].generator.keys"}},
	{"nexmark model", "name: j\nsources: [{id: src, generator: {kind: nexmark, nexmark: {event_rate: -1, bid_proportion: 2000000, out_of_order_group: 1906}}}]\n" + out,
		[]string{"sources[0].generator.nexmark.event_rate", "sources[0].generator.nexmark.bid_proportion", "sources[0].generator.nexmark.out_of_order_group"}},
	{"nexmark model of another kind", "name: j\nsources: [{id: src, generator: {kind: clicks, nexmark: {event_rate: 5}}}]\n" + out,
		[]string{"sources[0].generator.nexmark"}},
	{"throttle", "name: j\n" + src + "sinks: [{id: out, input: src, discard: true, throttle: -1}]\n", []string{"sinks[0].throttle"}},
	{"timestamp both", "name: j\nsources: [{id: src, generator: {kind: sequence}, timestamp: {field: ts, function: {module: " + modA + ", function: f}}}]\n" + out,
		[]string{"sources[0].timestamp"}},
	{"timestamp function", "name: j\nsources: [{id: src, generator: {kind: sequence}, timestamp: {function: {module: sha256:ABC}}}]\n" + out,
		[]string{"sources[0].timestamp.function.module", "sources[0].timestamp.function.function"}},
	{"watermarks", `
name: j
sources:
  - {id: a, generator: {kind: sequence}, watermark: {max_out_of_orderness: -1s, idle_timeout: -1s, interval: -1s}}
  - {id: b, generator: {kind: sequence}, watermark: {strategy: punctuated}}
  - {id: c, generator: {kind: sequence}, watermark: {strategy: monotonous, max_out_of_orderness: 1s, function: {module: ` + modA + `, function: f}}}
sinks: [{id: out, input: a, discard: true}]
`, []string{"sources[0].watermark.strategy", "sources[0].watermark.max_out_of_orderness", "sources[0].watermark.idle_timeout",
		"sources[0].watermark.interval", "sources[1].watermark.function", "sources[2].watermark.max_out_of_orderness",
		"sources[2].watermark.function"}},
	{"sinks", "name: j\n" + src + "sinks: [{id: a, input: src}, {id: b, input: src, discard: true, jetstream: {subject: b}}, " +
		"{id: c, input: src, jetstream: {subject: 'c.*', max_in_flight: 0}}, {id: d, input: src, jetstream: {}}]\n",
		[]string{"sinks[0]", "sinks[1]", "sinks[2].jetstream.subject", "sinks[2].jetstream.max_in_flight", "sinks[3].jetstream.subject"}},
	{"sink inputs", "name: j\n" + src + "operators: [{id: op, input: out, map: {module: " + modA + ", function: f}}]\n" +
		"sinks: [{id: out, input: nowhere, discard: true}, {id: side, discard: true}]\n",
		[]string{"operators[0].input", "sinks[0].input", "sinks[1].input"}},

	// Operators.
	{"operator kinds", withOps(`
  - {id: none, input: src}
  - {id: two, input: src, map: {module: ` + modA + `, function: f}, filter: {module: ` + modA + `, function: f}}
  - {id: nomodule, input: src, map: {function: f}}
  - {id: op, map: {module: ` + modA + `}}
`), []string{"operators[0]", "operators[1]", "operators[2].map.module", "operators[3].input", "operators[3].map.function"}},
	{"extract", withOps(`
  - {id: op, input: src, extract: {}}
  - {id: both, input: src, extract: {field: bid}, map: {module: ` + modA + `, function: f}}
  - {id: sides, input: src, extract: {field: bid}, side_outputs: [x], window: {type: tumbling, size: 1s}}
`), []string{"operators[0].extract.field", "operators[1]", "operators[2].side_outputs", "operators[2].window"}},
	{"misplaced window fields", withOps(`
  - {id: op, input: src, map: {module: ` + modA + `, function: f}, window: {type: tumbling, size: 1s},
     window_all: {type: tumbling, size: 1s}, allowed_lateness: 1s, late_output: out}
`), []string{"operators[0].window", "operators[0].window_all", "operators[0].allowed_lateness", "operators[0].late_output"}},
	{"windowed operators", withOps(`
  - {id: a, input: src, aggregate: {builtin: count}}
  - {id: b, input: src, key_by: {field: k}, window: {type: tumbling, size: 1s}, window_all: {type: tumbling, size: 1s}, reduce: {module: ` + modA + `, function: f}}
  - {id: c, input: src, window: {type: tumbling, size: 1s}, process_window: {module: ` + modA + `, function: f}}
  - {id: op, input: src, key_by: {field: k}, window_all: {type: tumbling, size: 1s}, aggregate: {builtin: count}, allowed_lateness: -1s}
  - {id: p, input: src, process: {module: ` + modA + `, function: f}}
`), []string{"operators[0]", "operators[1]", "operators[2].key_by", "operators[3].key_by", "operators[3].allowed_lateness",
		"operators[4].key_by"}},
	{"late outputs", `
name: j
sources: [{id: src, generator: {kind: sequence}}]
operators:
  - {id: a, input: src, key_by: {field: k}, window: {type: tumbling, size: 1s}, aggregate: {builtin: count}, late_output: nowhere}
  - {id: b, input: src, key_by: {field: k}, window: {type: tumbling, size: 1s}, aggregate: {builtin: count}, late_output: out}
  - {id: c, input: src, key_by: {field: k}, window: {type: tumbling, size: 1s}, aggregate: {builtin: count}, late_output: a}
sinks: [{id: out, input: a, discard: true}, {id: unnamed, discard: true}]
`, []string{"operators[0].late_output", "operators[1].late_output", "operators[2].late_output", "sinks[1].input"}},
	{"key_by", withOps(`
  - {id: a, input: src, key_by: {field: k, module: ` + modA + `, function: f}, map: {module: ` + modA + `, function: f}}
  - {id: b, input: src, key_by: {}, map: {module: ` + modA + `, function: f}}
  - {id: op, input: src, key_by: {module: ` + modA + `}, map: {module: ` + modA + `, function: f}}
`), []string{"operators[0].key_by", "operators[1].key_by", "operators[2].key_by.function"}},
	{"aggregates", withOps(`
  - {id: a, input: src, window_all: {type: count, count: 1}, aggregate: {builtin: sum}}
  - {id: b, input: src, window_all: {type: count, count: 1}, aggregate: {builtin: median, field: x}}
  - {id: c, input: src, window_all: {type: count, count: 1}, aggregate: {builtin: count, field: x}}
  - {id: d, input: src, window_all: {type: count, count: 1}, aggregate: {builtin: max, module: ` + modA + `, function: f}}
  - {id: e, input: src, window_all: {type: count, count: 1}, aggregate: {}}
  - {id: op, input: src, window_all: {type: count, count: 1}, aggregate: {field: x, module: ` + modA + `, function: f}}
`), []string{"operators[0].aggregate.field", "operators[1].aggregate.builtin", "operators[2].aggregate.field",
		"operators[3].aggregate", "operators[4].aggregate", "operators[5].aggregate.field"}},
	{"windows", withOps(`
  - {id: a, input: src, window_all: {size: 1s}, aggregate: {builtin: count}}
  - {id: b, input: src, window_all: {type: tumbling, slide: 1s, offset: -1s}, aggregate: {builtin: count}}
  - {id: c, input: src, window_all: {type: tumbling, size: 1s, offset: 1s}, aggregate: {builtin: count}}
  - {id: d, input: src, window_all: {type: sliding, size: 10s, offset: 5s, count: 3}, aggregate: {builtin: count}}
  - {id: e, input: src, window_all: {type: session}, aggregate: {builtin: count}}
  - {id: f, input: src, window_all: {type: session, gap: 1s, gap_function: {module: ` + modA + `, function: g}}, aggregate: {builtin: count}}
  - {id: op, input: src, window_all: {type: count, count: 0, count_slide: -1, gap: 1s}, aggregate: {builtin: count}}
`), []string{"operators[0].window_all.type", "operators[1].window_all.slide", "operators[1].window_all.size",
		"operators[1].window_all.offset", "operators[2].window_all.offset", "operators[3].window_all.count",
		"operators[3].window_all.slide", "operators[4].window_all.gap", "operators[5].window_all",
		"operators[6].window_all.gap", "operators[6].window_all.count", "operators[6].window_all.count_slide"}},
	{"joins", withOps(`
  - {id: a, input: src, key_by: {field: k}, join: {left: {input: src, key_by: {field: k}}, right: {input: nowhere}}}
  - id: b
    join:
      left: {input: src, key_by: {field: k}}
      right: {input: src, key_by: {field: k}}
      window: {type: count, count: 5}
      interval: {lower: 1s, upper: 0s}
      function: {module: ` + modA + `, function: f}
      co_group: {module: ` + modA + `, function: g}
  - id: op
    join:
      left: {input: src, key_by: {field: k}}
      right: {input: src, key_by: {field: k}}
      interval: {lower: 1s, upper: 0s}
      co_group: {module: ` + modA + `, function: g}
    window: {type: tumbling, size: 1s}
`), []string{"operators[0].input", "operators[0].key_by", "operators[0].join.right.input", "operators[0].join.right.key_by",
		"operators[0].join", "operators[1].join", "operators[1].join", "operators[2].join.interval",
		"operators[2].join.co_group", "operators[2].window"}},
	{"join windows and sliding offsets", withOps(`
  - {id: a, join: {left: {input: src, key_by: {field: k}}, right: {input: src, key_by: {field: k}}, window: {type: count, count: 5}}}
  - {id: op, input: a, window_all: {type: sliding, size: 10s, slide: 2s, offset: 2s}, reduce: {module: ` + modA + `, function: r}}
`), []string{"operators[0].join.window.type", "operators[1].window_all.offset"}},
	{"triggers", withOps(`
  - {id: a, input: src, key_by: {field: k}, window: {type: tumbling, size: 1s, trigger: {type: count}}, aggregate: {builtin: count}}
  - {id: b, input: src, key_by: {field: k}, window: {type: tumbling, size: 1s, trigger: {type: event_time, count: 2, interval: 1s}}, aggregate: {builtin: count}}
  - {id: c, input: src, key_by: {field: k}, window: {type: sliding, size: 1s, slide: 100ms, trigger: {type: continuous_event_time, interval: 500us}}, aggregate: {builtin: count}}
  - {id: d, input: src, key_by: {field: k}, window: {type: count, count: 5, trigger: {type: count, count: 2, purge: true}}, aggregate: {builtin: count}}
  - {id: e, input: src, window_all: {type: session, gap: 1s, trigger: {type: whenever}}, aggregate: {builtin: count}}
  - {id: f, join: {left: {input: src, key_by: {field: k}}, right: {input: src, key_by: {field: k}}, window: {type: tumbling, size: 1s, trigger: {type: count, count: 1}}}}
  - {id: op, input: src, key_by: {field: k}, window: {type: session, gap: 1s, trigger: {type: continuous_processing_time}}, aggregate: {builtin: count}}
`), []string{"operators[0].window.trigger.count", "operators[1].window.trigger.count", "operators[1].window.trigger.interval",
		"operators[2].window.trigger.interval", "operators[3].window.trigger", "operators[4].window_all.trigger.type",
		"operators[5].join.window.trigger", "operators[6].window.trigger.interval"}},
	{"global windows", withOps(`
  - {id: a, input: src, key_by: {field: k}, window: {type: global}, aggregate: {builtin: count}}
  - {id: b, input: src, key_by: {field: k}, window: {type: global, count: 3, trigger: {type: processing_time}}, aggregate: {builtin: count}}
  - {id: op, join: {left: {input: src, key_by: {field: k}}, right: {input: src, key_by: {field: k}}, window: {type: global}}}
`), []string{"operators[0].window.trigger", "operators[1].window.count", "operators[1].window.trigger.type", "operators[2].join.window.type"}},
	{"event-time triggers in processing time", "time: processing\n" + withOps(`
  - {id: a, input: src, key_by: {field: k}, window: {type: tumbling, size: 1s, trigger: {type: event_time, purge: true}}, aggregate: {builtin: count}}
  - {id: b, input: src, key_by: {field: k}, window: {type: tumbling, size: 1s, trigger: {type: processing_time, purge: true}}, aggregate: {builtin: count}}
  - {id: op, input: src, window_all: {type: sliding, size: 2s, slide: 1s, trigger: {type: continuous_event_time, interval: 1s}}, aggregate: {builtin: count}}
`), []string{"operators[0].window.trigger.type", "operators[2].window_all.trigger.type"}},
	{"module ids", withOps(`
  - {id: a, input: src, map: {module: ` + modA[:70] + `, function: f}}
  - {id: b, input: src, map: {module: "sha256:` + repeat("A", 64) + `", function: f}}
  - {id: op, input: src, map: {module: "md5:` + repeat("a", 64) + `", function: f}}
  - {id: n1, input: src, map: {module: words, function: f}}
  - {id: n2, input: src, map: {module: words@12, function: f}}
  - {id: n3, input: src, map: {module: Words, function: f}}
  - {id: n4, input: src, map: {module: words@0, function: f}}
  - {id: n5, input: src, key_by: {module: "-words", function: f}, window: {type: tumbling, size: 1s}, aggregate: {module: "words@", function: g}}
`), []string{"operators[0].map.module", "operators[1].map.module", "operators[2].map.module",
		"operators[5].map.module", "operators[6].map.module", "operators[7].key_by.module", "operators[7].aggregate.module"}},
	{"cycles", `
name: j
sources: [{id: src, generator: {kind: sequence}}]
operators:
  - {id: a, input: c, map: {module: ` + modA + `, function: f}}
  - {id: b, input: a, map: {module: ` + modA + `, function: f}}
  - {id: c, join: {left: {input: src, key_by: {field: k}}, right: {input: b, key_by: {field: k}}, window: {type: tumbling, size: 1s}}}
  - {id: self, input: self, map: {module: ` + modA + `, function: f}}
sinks: [{id: out, input: c, discard: true}]
`, []string{"operators[0]", "operators[3]"}},
}

func repeat(s string, n int) string {
	r := ""
	for range n {
		r += s
	}
	return r
}

func TestParseInvalid(t *testing.T) {
	for _, tc := range invalidSpecs {
		t.Run(tc.name, func(t *testing.T) {
			j, err := Parse([]byte(tc.spec))
			if j != nil {
				t.Errorf("Parse returned a job with the error")
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got error %v, want *Error", err)
			}
			var got []string
			for _, p := range e.Problems {
				got = append(got, p.Path)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tc.paths))
			if !slices.Equal(got, want) {
				t.Errorf("paths %q, want %q; error: %v", got, want, err)
			}
		})
	}
}
