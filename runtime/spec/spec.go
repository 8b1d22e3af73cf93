// Package spec owns the job specification: its types, strict parsing from
// JSON or YAML, defaults, and validation with errors that name the field path.
// docs/JOBS.md is the user's reference.
//
// The `json` tag of a field is its name in the spec. A `default` tag holds the
// YAML that stands in for the field when the spec leaves it out (or sets it to
// null): `default:"{}"` makes an absent block present with its own defaults.
// A `required:"true"` tag marks a field the validator insists on (a list:
// with at least one element); JSONSchema lists these as required.
package spec

import "encoding/json"

// Job is a parsed, defaulted and validated job specification.
// After Parse, UDF, Restart and State are always set; Checkpoint is nil when
// the job takes no checkpoints.
type Job struct {
	Name           string   `json:"name" required:"true"`
	Parallelism    int      `json:"parallelism" default:"1"`
	MaxParallelism int      `json:"max_parallelism" default:"128"`
	Time           string   `json:"time" default:"event"` // event | processing | ingestion
	BufferTimeout  Duration `json:"buffer_timeout" default:"100ms"`
	// Placement says where a job's subtasks run in cluster mode: local
	// (all on the job's leader while it has free slots) or spread (over
	// the live workers).
	Placement  string        `json:"placement" default:"local"` // local | spread
	Checkpoint *Checkpoint   `json:"checkpoint,omitempty"`
	Restart    *Restart      `json:"restart,omitempty" default:"{}"`
	OnUDFError OnUDFError    `json:"on_udf_error" default:"fail"`
	DeadLetter string        `json:"dead_letter_subject,omitempty"`
	UDF        UDFLimits     `json:"udf" default:"{}"`
	State      *StateBackend `json:"state,omitempty" default:"{}"`
	Sources    []Source      `json:"sources" required:"true"`
	Operators  []Operator    `json:"operators,omitempty"`
	Sinks      []Sink        `json:"sinks" required:"true"`
	// Lookups says what async_lookup operators may reach.
	Lookups *Lookups `json:"lookups,omitempty"`
}

// UDFLimits are the sandbox limits for every Wasm instance of the job.
type UDFLimits struct {
	// MemoryLimit is the largest linear memory of one instance, in bytes
	// (a multiple of 64 KiB, at most 4 GiB); default 64 MiB.
	MemoryLimit int64 `json:"memory_limit" default:"67108864"`
	// CallTimeout is the deadline of one call into a module; default 10s.
	CallTimeout Duration `json:"call_timeout" default:"10s"`
	// BatchSize is the most records passed in one call; default 1024.
	BatchSize int `json:"batch_size" default:"1024"`
}

// Checkpoint configures periodic checkpoints.
type Checkpoint struct {
	Interval  Duration `json:"interval" required:"true"`
	Mode      string   `json:"mode" default:"exactly_once"` // exactly_once | at_least_once
	Unaligned bool     `json:"unaligned,omitzero"`
	Timeout   Duration `json:"timeout" default:"10m"`
	MinPause  Duration `json:"min_pause,omitzero"`
	Retain    int      `json:"retain" default:"3"`
}

// Restart is the restart strategy, as Flink's: none, fixed_delay,
// exponential (with a reset after a stable run) or failure_rate.
type Restart struct {
	Strategy string `json:"strategy" default:"none"` // none | fixed_delay | exponential | failure_rate
	// MaxAttempts bounds the restarts of fixed_delay (over the job's
	// life) and exponential (since its last reset); 0: no bound.
	MaxAttempts int `json:"max_attempts,omitzero"`
	// Delay is the wait before a restart (the first one for exponential).
	Delay Duration `json:"delay" default:"1s"`
	// MaxDelay caps the growing delay of the exponential strategy.
	MaxDelay Duration `json:"max_delay" default:"5m"`
	// Multiplier grows the exponential delay after each restart.
	Multiplier float64 `json:"multiplier" default:"2"`
	// Jitter spreads each exponential delay by up to this share of it,
	// either way (0 to 1).
	Jitter float64 `json:"jitter,omitzero"`
	// ResetAfter: a run of the exponential strategy that held this long
	// before it failed resets the delay and the attempts; 0: never.
	ResetAfter Duration `json:"reset_after" default:"1h"`
	// MaxFailuresPerInterval is how many failures failure_rate restarts
	// within any Interval; one more fails the job.
	MaxFailuresPerInterval int `json:"max_failures_per_interval" default:"1"`
	// Interval is failure_rate's sliding window.
	Interval Duration `json:"interval" default:"1m"`
}

// OnUDFError is what happens to a record a function fails on. The spec
// gives it as a policy name (`on_udf_error: skip`) or as an object
// (`on_udf_error: {policy: quarantine, after: 3}`).
type OnUDFError struct {
	Policy string `json:"policy" default:"fail"` // fail | skip | dead_letter | quarantine
	// After is how many failed records of one key park the key, under
	// quarantine.
	After int `json:"after,omitzero"`
	// Budget bounds the bytes of parked records a subtask keeps for
	// release, under quarantine; 0: 16 MiB.
	Budget int64 `json:"budget,omitzero"`
}

// MarshalJSON writes a bare policy as its name, as the spec may give it.
func (o OnUDFError) MarshalJSON() ([]byte, error) {
	if o.After == 0 && o.Budget == 0 {
		return json.Marshal(o.Policy)
	}
	type object OnUDFError
	return json.Marshal(object(o))
}

// UnmarshalJSON reads either form MarshalJSON writes (a plan carries its
// job spec as JSON).
func (o *OnUDFError) UnmarshalJSON(data []byte) error {
	var name string
	if err := json.Unmarshal(data, &name); err == nil {
		*o = OnUDFError{Policy: name}
		return nil
	}
	type object OnUDFError
	return json.Unmarshal(data, (*object)(o))
}

// StateBackend chooses where keyed state lives.
type StateBackend struct {
	Backend string `json:"backend" default:"memory"` // memory | pebble
	// Budget bounds the job's state memory in bytes; 0: the worker's budget.
	Budget int64 `json:"budget,omitzero"`
}

// FunctionRef names a function in an uploaded module.
type FunctionRef struct {
	Module   string `json:"module" required:"true"` // an id ("sha256:" and 64 lowercase hex digits), a name, or name@version
	Function string `json:"function" required:"true"`
}
