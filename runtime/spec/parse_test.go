package spec

import (
	"reflect"
	"testing"
)

// validSpecs parse, and want says how the result differs from minimalJob
// (nil: not at all). FuzzParse is seeded with them.
var validSpecs = []struct {
	name string
	spec string
	want func(j *Job)
}{
	{"minimal yaml", minimalSpec, nil},
	{"minimal json", `{"name": "j",
		"sources": [{"id": "src", "generator": {"kind": "sequence"}}],
		"sinks": [{"id": "out", "input": "src", "discard": true}]}`, nil},
	{"json with surrogate escapes and leading space", "\n\t " + `{"name": "j",
		"sources": [{"id": "src", "generator": {"kind": "sequence"}, "timestamp": {"field": "\ud83d\ude00\u00e9\/"}}],
		"sinks": [{"id": "out", "input": "src", "discard": true}]}`,
		func(j *Job) { j.Sources[0].Timestamp = &Timestamp{Field: "😀é/"} }},
	{"buffer_timeout 0s is kept", minimalSpec + "buffer_timeout: 0s\n",
		func(j *Job) { j.BufferTimeout = Duration{} }},
	{"negative buffer_timeout is kept", minimalSpec + "buffer_timeout: -1ms\n",
		func(j *Job) { j.BufferTimeout = dur("-1ms") }},
	{"vertices inherit parallelism unless set", `
name: j
parallelism: 4
max_parallelism: 8
sources: [{id: src, parallelism: 2, generator: {kind: clicks, rate: 10, count: 100, keys: 7}}]
sinks: [{id: out, input: src, discard: true}]
`, func(j *Job) {
		j.Parallelism, j.MaxParallelism = 4, 8
		j.Sources[0].Parallelism = 2
		j.Sources[0].Generator = &Generator{Kind: "clicks", Rate: 10, Count: 100, Keys: 7}
		j.Sinks[0].Parallelism = 4
	}},
	{"checkpoint defaults", minimalSpec + "checkpoint: {interval: 1s}\n",
		func(j *Job) {
			j.Checkpoint = &Checkpoint{Interval: dur("1s"), Mode: "exactly_once", Timeout: dur("10m"), Retain: 3}
		}},
	{"checkpoint set", minimalSpec + `checkpoint:
  {interval: 5s, mode: at_least_once, unaligned: true, timeout: 30s, min_pause: 500ms, retain: 1}
`, func(j *Job) {
		j.Checkpoint = &Checkpoint{Interval: dur("5s"), Mode: "at_least_once", Unaligned: true,
			Timeout: dur("30s"), MinPause: dur("500ms"), Retain: 1}
	}},
	{"restart, state, time, udf", minimalSpec + `
restart: {strategy: fixed_delay, max_attempts: 3, delay: 2s}
state: {backend: pebble, budget: 1048576}
time: processing
udf: {batch_size: 16, memory_limit: 4294967296}
`, func(j *Job) {
		j.Restart = &Restart{Strategy: "fixed_delay", MaxAttempts: 3, Delay: dur("2s"), MaxDelay: dur("5m"), Multiplier: 2, ResetAfter: dur("1h"), MaxFailuresPerInterval: 1, Interval: dur("1m")}
		j.State = &StateBackend{Backend: "pebble", Budget: 1 << 20}
		j.Time = "processing"
		j.UDF = UDFLimits{MemoryLimit: 4 << 30, CallTimeout: dur("10s"), BatchSize: 16}
	}},
	{"dead letter", minimalSpec + "on_udf_error: dead_letter\ndead_letter_subject: j.dead\n",
		func(j *Job) { j.OnUDFError, j.DeadLetter = OnUDFError{Policy: "dead_letter"}, "j.dead" }},
	{"quarantine", minimalSpec + "on_udf_error: {policy: quarantine, after: 3, budget: 1024}\ndead_letter_subject: j.dead\n",
		func(j *Job) {
			j.OnUDFError, j.DeadLetter = OnUDFError{Policy: "quarantine", After: 3, Budget: 1024}, "j.dead"
		}},
	{"on_udf_error object with a bare policy", minimalSpec + "on_udf_error: {policy: skip}\n",
		func(j *Job) { j.OnUDFError = OnUDFError{Policy: "skip"} }},
	{"null is absent", minimalSpec + "restart: null\nudf:\noperators: ~\ncheckpoint: null\n", nil},
	{"empty lists are none", `
name: j
sources: [{id: src, jetstream: {stream: S, subjects: []}}]
operators: []
sinks: [{id: out, input: src, jetstream: {subject: s.out, max_in_flight: 1}}]
`, func(j *Job) {
		j.Sources[0].Generator = nil
		j.Sources[0].JetStream = &JSSource{Stream: "S", OnGap: "fail"}
		j.Sinks[0].Discard = false
		j.Sinks[0].JetStream = &JSSink{Subject: "s.out", MaxInFlight: 1}
	}},
	{"jetstream source, timestamp function, watermarks", `
name: j
sources:
  - id: src
    jetstream: {stream: S, subjects: ["a.*.b", "c.>"], bounded: true, on_gap: skip}
    timestamp: {function: {module: ` + modA + `, function: ts}}
    watermark: {strategy: monotonous, idle_timeout: 1m}
  - id: two
    generator: {kind: nexmark, seed: 7, nexmark: {event_rate: 1000, bid_proportion: 20, out_of_order_group: 10}}
    watermark: {strategy: punctuated, interval: 0s, function: {module: ` + modB + `, function: wm}}
sinks: [{id: out, input: src, jetstream: {subject: s.out}}]
`, func(j *Job) {
		j.Sources = []Source{
			{ID: "src", Parallelism: 1,
				JetStream: &JSSource{Stream: "S", Subjects: []string{"a.*.b", "c.>"}, Bounded: true, OnGap: "skip"},
				Timestamp: &Timestamp{Function: &FunctionRef{Module: modA, Function: "ts"}},
				Watermark: &Watermark{Strategy: "monotonous", IdleTimeout: dur("1m"), Interval: dur("200ms")}},
			{ID: "two", Parallelism: 1, Generator: &Generator{Kind: "nexmark", Keys: 1000, Seed: 7,
				Nexmark: &NexmarkModel{EventRate: 1000, BidProportion: 20, OutOfOrderGroup: 10}},
				Watermark: &Watermark{Strategy: "punctuated", Function: &FunctionRef{Module: modB, Function: "wm"}}},
		}
		j.Sinks[0].Discard = false
		j.Sinks[0].JetStream = &JSSink{Subject: "s.out", MaxInFlight: 4096}
	}},
	{"stateless chain with anchors", withOps(`
  - {id: m, input: src, map: &f {module: ` + modA + `, function: f}, key_by: {module: ` + modB + `, function: k}}
  - {id: f, input: m, filter: *f}
  - {id: op, input: f, flat_map: *f, parallelism: 3}
`), func(j *Job) {
		f := &FunctionRef{Module: modA, Function: "f"}
		j.Operators = []Operator{
			{ID: "m", Input: "src", Parallelism: 1, Map: f, KeyBy: &KeyBy{Module: modB, Function: "k"}},
			{ID: "f", Input: "m", Parallelism: 1, Filter: f},
			{ID: "op", Input: "f", Parallelism: 3, FlatMap: f},
		}
		j.Sinks[0].Input = "op"
	}},
	{"windows", `
name: j
sources: [{id: src, generator: {kind: text}}]
operators:
  - {id: sum, input: src, key_by: {field: k}, window: {type: sliding, size: 10s, slide: 5s, offset: 1s},
     aggregate: {builtin: sum, field: n}, allowed_lateness: 1s, late_output: late}
  - {id: sess, input: src, key_by: {field: k}, window: {type: session, gap_function: {module: ` + modA + `, function: g}},
     reduce: {module: ` + modA + `, function: r}}
  - {id: cnt, input: src, key_by: {field: k}, window: {type: count, count: 100, count_slide: 10},
     process_window: {module: ` + modA + `, function: w}}
  - {id: all, input: src, window_all: {type: tumbling, size: 1m, offset: 30s},
     aggregate: {module: ` + modB + `, function: a}}
  - {id: ses2, input: src, key_by: {field: k}, window: {type: session, gap: 5s}, aggregate: {builtin: count}}
  - {id: keyed, input: src, key_by: {field: k}, process: {module: ` + modA + `, function: p}}
sinks:
  - {id: out, input: sum, discard: true}
  - {id: late, discard: true, parallelism: 1}
`, func(j *Job) {
		j.Sources[0].Generator.Kind = "text"
		k := &KeyBy{Field: "k"}
		j.Operators = []Operator{
			{ID: "sum", Input: "src", Parallelism: 1, KeyBy: k,
				Window:    &Window{Type: "sliding", Size: dur("10s"), Slide: dur("5s"), Offset: dur("1s")},
				Aggregate: &Aggregate{Builtin: "sum", Field: "n"}, AllowedLateness: dur("1s"), LateOutput: "late"},
			{ID: "sess", Input: "src", Parallelism: 1, KeyBy: k,
				Window: &Window{Type: "session", GapFunction: &FunctionRef{Module: modA, Function: "g"}},
				Reduce: &FunctionRef{Module: modA, Function: "r"}},
			{ID: "cnt", Input: "src", Parallelism: 1, KeyBy: k,
				Window:        &Window{Type: "count", Count: 100, CountSlide: 10},
				ProcessWindow: &FunctionRef{Module: modA, Function: "w"}},
			{ID: "all", Input: "src", Parallelism: 1,
				WindowAll: &Window{Type: "tumbling", Size: dur("1m"), Offset: dur("30s")},
				Aggregate: &Aggregate{Module: modB, Function: "a"}},
			{ID: "ses2", Input: "src", Parallelism: 1, KeyBy: k,
				Window: &Window{Type: "session", Gap: dur("5s")}, Aggregate: &Aggregate{Builtin: "count"}},
			{ID: "keyed", Input: "src", Parallelism: 1, KeyBy: k, Process: &FunctionRef{Module: modA, Function: "p"}},
		}
		j.Sinks = []Sink{
			{ID: "out", Input: "sum", Parallelism: 1, Discard: true},
			{ID: "late", Parallelism: 1, Discard: true},
		}
	}},
	{"joins", withOps(`
  - id: w
    join:
      left: {input: src, key_by: {field: a}}
      right: {input: src, key_by: {module: ` + modA + `, function: k}}
      window: {type: tumbling, size: 1m}
      co_group: {module: ` + modA + `, function: cg}
  - id: op
    join:
      left: {input: w, key_by: {field: a}}
      right: {input: src, key_by: {field: b}}
      interval: {lower: -1s, upper: 1s, lower_exclusive: true, upper_exclusive: true}
`), func(j *Job) {
		j.Operators = []Operator{
			{ID: "w", Parallelism: 1, Join: &Join{
				Left:    JoinSide{Input: "src", KeyBy: KeyBy{Field: "a"}},
				Right:   JoinSide{Input: "src", KeyBy: KeyBy{Module: modA, Function: "k"}},
				Window:  &Window{Type: "tumbling", Size: dur("1m")},
				CoGroup: &FunctionRef{Module: modA, Function: "cg"},
			}},
			{ID: "op", Parallelism: 1, Join: &Join{
				Left:     JoinSide{Input: "w", KeyBy: KeyBy{Field: "a"}},
				Right:    JoinSide{Input: "src", KeyBy: KeyBy{Field: "b"}},
				Interval: &Interval{Lower: dur("-1s"), Upper: dur("1s"), LowerExclusive: true, UpperExclusive: true},
			}},
		}
		j.Sinks[0].Input = "op"
	}},
}

func TestParseValid(t *testing.T) {
	for _, tc := range validSpecs {
		t.Run(tc.name, func(t *testing.T) {
			got := mustParse(t, tc.spec)
			want := minimalJob()
			if tc.want != nil {
				tc.want(want)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got\n%s\nwant\n%s", show(got), show(want))
			}
		})
	}
}

func TestParseDesignExample(t *testing.T) {
	for name, spec := range map[string]string{"yaml": designSpec, "json": designJSON} {
		t.Run(name, func(t *testing.T) {
			if got, want := mustParse(t, spec), designJob(); !reflect.DeepEqual(got, want) {
				t.Errorf("got\n%s\nwant\n%s", show(got), show(want))
			}
		})
	}
}
