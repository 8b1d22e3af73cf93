package spec

// designSpec is the example of DESIGN.md with module ids filled in.
const designSpec = `
name: clicks-per-user
parallelism: 2               # default for operators
max_parallelism: 128         # key groups
time: event                  # event | processing | ingestion
buffer_timeout: 100ms        # 0s: flush every record; negative (-1ms): only when a buffer is full
checkpoint: {interval: 1s, mode: exactly_once, unaligned: false, timeout: 1m}
restart: {strategy: exponential, max_attempts: 10}
on_udf_error: fail           # fail | skip | dead_letter (with dead_letter_subject)
sources:
  - id: clicks
    jetstream: {stream: CLICKS, subjects: ["clicks.>"], bounded: false}
    timestamp: {field: ts}   # milliseconds; or {function: ...} in a module
    watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 5s, idle_timeout: 30s, interval: 200ms}
  - id: impressions
    jetstream: {stream: IMPRESSIONS, subjects: ["impressions.>"]}
    timestamp: {field: ts}
    watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 5s}
operators:
  - id: parse
    input: clicks
    map: {module: "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", function: parse}
  - id: per_user
    input: parse
    key_by: {field: user}
    window: {type: tumbling, size: 1m}
    aggregate: {builtin: count}
    allowed_lateness: 10s
    late_output: late
  - id: first_seen
    input: parse
    key_by: {field: user}
    process: {module: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", function: dedup}
  - id: attribute
    join:
      left:  {input: parse, key_by: {field: ad}}
      right: {input: impressions, key_by: {field: ad}}
      interval: {lower: -10s, upper: 0s}
      function: {module: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", function: attribute}
sinks:
  - id: out
    input: per_user
    jetstream: {subject: clicks.per_user}
  - id: late                 # no input: it receives the side output named by late_output
    jetstream: {subject: clicks.late}
`

// designJSON is designSpec in JSON.
const designJSON = `{
  "name": "clicks-per-user",
  "parallelism": 2,
  "max_parallelism": 128,
  "time": "event",
  "buffer_timeout": "100ms",
  "checkpoint": {"interval": "1s", "mode": "exactly_once", "unaligned": false, "timeout": "1m"},
  "restart": {"strategy": "exponential", "max_attempts": 10},
  "on_udf_error": "fail",
  "sources": [
    {"id": "clicks",
     "jetstream": {"stream": "CLICKS", "subjects": ["clicks.>"], "bounded": false},
     "timestamp": {"field": "ts"},
     "watermark": {"strategy": "bounded_out_of_orderness", "max_out_of_orderness": "5s", "idle_timeout": "30s", "interval": "200ms"}},
    {"id": "impressions",
     "jetstream": {"stream": "IMPRESSIONS", "subjects": ["impressions.>"]},
     "timestamp": {"field": "ts"},
     "watermark": {"strategy": "bounded_out_of_orderness", "max_out_of_orderness": "5s"}}
  ],
  "operators": [
    {"id": "parse", "input": "clicks", "map": {"module": "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "function": "parse"}},
    {"id": "per_user", "input": "parse", "key_by": {"field": "user"},
     "window": {"type": "tumbling", "size": "1m"}, "aggregate": {"builtin": "count"},
     "allowed_lateness": "10s", "late_output": "late"},
    {"id": "first_seen", "input": "parse", "key_by": {"field": "user"},
     "process": {"module": "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "function": "dedup"}},
    {"id": "attribute", "join": {
      "left": {"input": "parse", "key_by": {"field": "ad"}},
      "right": {"input": "impressions", "key_by": {"field": "ad"}},
      "interval": {"lower": "-10s", "upper": "0s"},
      "function": {"module": "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "function": "attribute"}}}
  ],
  "sinks": [
    {"id": "out", "input": "per_user", "jetstream": {"subject": "clicks.per_user"}},
    {"id": "late", "jetstream": {"subject": "clicks.late"}}
  ]
}`

// designJob is what designSpec and designJSON parse to.
func designJob() *Job {
	wm := func(idle string) *Watermark {
		return &Watermark{Strategy: "bounded_out_of_orderness", MaxOutOfOrderness: dur("5s"), IdleTimeout: dur(idle), Interval: dur("200ms")}
	}
	return &Job{
		Name:           "clicks-per-user",
		Parallelism:    2,
		MaxParallelism: 128,
		Time:           "event",
		BufferTimeout:  dur("100ms"),
		Placement:      "local",
		Checkpoint:     &Checkpoint{Interval: dur("1s"), Mode: "exactly_once", Timeout: dur("1m"), Retain: 3},
		Restart:        &Restart{Strategy: "exponential", MaxAttempts: 10, Delay: dur("1s"), MaxDelay: dur("5m"), Multiplier: 2, ResetAfter: dur("1h"), MaxFailuresPerInterval: 1, Interval: dur("1m")},
		OnUDFError:     OnUDFError{Policy: "fail"},
		UDF:            UDFLimits{MemoryLimit: 64 << 20, CallTimeout: dur("10s"), BatchSize: 1024},
		State:          &StateBackend{Backend: "memory"},
		Sources: []Source{
			// One subject filter each: one split, so one subtask.
			{ID: "clicks", Parallelism: 1, JetStream: &JSSource{Stream: "CLICKS", Subjects: []string{"clicks.>"}, OnGap: "fail"},
				Timestamp: &Timestamp{Field: "ts"}, Watermark: wm("30s")},
			{ID: "impressions", Parallelism: 1, JetStream: &JSSource{Stream: "IMPRESSIONS", Subjects: []string{"impressions.>"}, OnGap: "fail"},
				Timestamp: &Timestamp{Field: "ts"}, Watermark: wm("0s")},
		},
		Operators: []Operator{
			{ID: "parse", Input: "clicks", Parallelism: 2, Map: &FunctionRef{Module: modA, Function: "parse"}},
			{ID: "per_user", Input: "parse", Parallelism: 2, KeyBy: &KeyBy{Field: "user"},
				Window: &Window{Type: "tumbling", Size: dur("1m")}, Aggregate: &Aggregate{Builtin: "count"},
				AllowedLateness: dur("10s"), LateOutput: "late"},
			{ID: "first_seen", Input: "parse", Parallelism: 2, KeyBy: &KeyBy{Field: "user"},
				Process: &FunctionRef{Module: modB, Function: "dedup"}},
			{ID: "attribute", Parallelism: 2, Join: &Join{
				Left:     JoinSide{Input: "parse", KeyBy: KeyBy{Field: "ad"}},
				Right:    JoinSide{Input: "impressions", KeyBy: KeyBy{Field: "ad"}},
				Interval: &Interval{Lower: dur("-10s")},
				Function: &FunctionRef{Module: modB, Function: "attribute"},
			}},
		},
		Sinks: []Sink{
			{ID: "out", Input: "per_user", Parallelism: 2, JetStream: &JSSink{Subject: "clicks.per_user", MaxInFlight: 4096}},
			{ID: "late", Parallelism: 2, JetStream: &JSSink{Subject: "clicks.late", MaxInFlight: 4096}},
		},
	}
}
