package spec

import (
	"fmt"
	"strings"
)

// Limits of the job-wide settings.
const (
	maxMaxParallelism = 32768
	wasmPage          = 64 << 10
	maxMemoryLimit    = 4 << 30
	maxBatchSize      = 65536
)

// validator collects every problem of a decoded and defaulted job.
type validator struct {
	job      *Job
	seen     map[string]int    // from the decoder: the lines of given fields
	vertices map[string]vertex // by id, the first declaration
	read     map[string]bool   // the side outputs ("id.name") inputs read
	problems []FieldError
}

// vertex locates a declaration: Sources, Operators or Sinks[index].
type vertex struct {
	kind  string // KindSource, KindOperator or KindSink
	index int
}

func (x vertex) path() string { return fmt.Sprintf("%ss[%d]", x.kind, x.index) }

// validate checks the whole job and returns every problem found.
func validate(j *Job, seen map[string]int) []FieldError {
	v := &validator{job: j, seen: seen, vertices: map[string]vertex{}}
	v.settings()
	v.lookups()
	v.checkIDs()
	for i := range j.Sources {
		v.source(fmt.Sprintf("sources[%d]", i), &j.Sources[i])
	}
	for i := range j.Operators {
		v.operator(fmt.Sprintf("operators[%d]", i), &j.Operators[i])
	}
	v.sinks()
	v.unread()
	v.cycles()
	return v.problems
}

func (v *validator) fail(path, format string, args ...any) {
	v.problems = append(v.problems, FieldError{Path: path, Message: fmt.Sprintf(format, args...), Line: v.line(path)})
}

// line is the line of path or of its nearest given ancestor; 0 at the top.
func (v *validator) line(path string) int {
	return Lines(v.seen).Line(path)
}

// oneOf checks that s is one of the allowed values.
func (v *validator) oneOf(path, s string, allowed ...string) {
	for _, a := range allowed {
		if s == a {
			return
		}
	}
	list := strings.Join(allowed, ", ")
	if s == "" {
		v.fail(path, "required: one of %s", list)
		return
	}
	v.fail(path, "must be one of %s; got %q%s", list, s, didYouMean(s, allowed))
}

func (v *validator) positive(path string, d Duration) {
	if d.Duration <= 0 {
		v.fail(path, "must be positive, got %s", d)
	}
}

func (v *validator) notNegative(path string, d Duration) {
	if d.Duration < 0 {
		v.fail(path, "must not be negative, got %s", d)
	}
}

func (v *validator) between(path string, n, lo, hi int64) {
	if n < lo || n > hi {
		v.fail(path, "must be between %d and %d, got %d", lo, hi, n)
	}
}

// parallelism checks a job's or a vertex's parallelism against
// max_parallelism. A vertex that inherits the job's is not checked again.
func (v *validator) parallelism(path string, p int) {
	if _, given := v.seen[path]; !given && path != "parallelism" {
		return
	}
	hi := v.job.MaxParallelism
	if hi < 1 || hi > maxMaxParallelism {
		hi = maxMaxParallelism // max_parallelism itself is reported
	}
	if p < 1 || p > hi {
		v.fail(path, "must be between 1 and max_parallelism (%d), got %d", hi, p)
	}
}

// function checks a reference to a function in an uploaded module.
func (v *validator) function(path string, module, function string) {
	switch {
	case module == "":
		v.fail(path+".module", "required")
	case !isModuleRef(module):
		v.fail(path+".module", "want a module id \"sha256:<64 lowercase hex digits>\", a module name or name@version, got %q", module)
	}
	if function == "" {
		v.fail(path+".function", "required")
	}
}

func (v *validator) functionRef(path string, f *FunctionRef) {
	v.function(path, f.Module, f.Function)
}

// settings checks the job-wide fields.
func (v *validator) settings() {
	j := v.job
	switch {
	case j.Name == "":
		v.fail("name", "required")
	case !isIdentifier(j.Name):
		v.fail("name", "want letters, digits, '-', '_' and '.', got %q", j.Name)
	}
	v.between("max_parallelism", int64(j.MaxParallelism), 1, maxMaxParallelism)
	v.parallelism("parallelism", j.Parallelism)
	v.oneOf("time", j.Time, timeModes...)
	v.onUDFError(&j.OnUDFError)
	deadLetters := j.OnUDFError.Policy == "dead_letter" || j.OnUDFError.Policy == "quarantine"
	v.oneOf("placement", j.Placement, placements...)
	switch {
	case deadLetters && j.DeadLetter == "":
		v.fail("dead_letter_subject", "required when on_udf_error is %s", j.OnUDFError.Policy)
	case !deadLetters && j.DeadLetter != "":
		v.fail("dead_letter_subject", "only used when on_udf_error is dead_letter or quarantine")
	case j.DeadLetter != "":
		if msg := subjectProblem(j.DeadLetter, false); msg != "" {
			v.fail("dead_letter_subject", "%s", msg)
		}
	}
	v.udf(&j.UDF)
	if j.Checkpoint != nil {
		v.checkpoint(j.Checkpoint)
	}
	v.restart(j.Restart)
	v.oneOf("state.backend", j.State.Backend, stateBackends...)
	if j.State.Budget < 0 {
		v.fail("state.budget", "must not be negative, got %d", j.State.Budget)
	}
}

func (v *validator) onUDFError(o *OnUDFError) {
	v.oneOf("on_udf_error", o.Policy, onUDFErrors...)
	switch {
	case o.Policy != "quarantine" && o.After != 0:
		v.fail("on_udf_error.after", "only used with policy quarantine")
	case o.Policy == "quarantine" && o.After < 1:
		v.fail("on_udf_error.after", "required with policy quarantine: the failed records of one key that park it, at least 1, got %d", o.After)
	}
	switch {
	case o.Policy != "quarantine" && o.Budget != 0:
		v.fail("on_udf_error.budget", "only used with policy quarantine")
	case o.Budget < 0:
		v.fail("on_udf_error.budget", "must not be negative, got %d", o.Budget)
	}
}

func (v *validator) udf(u *UDFLimits) {
	switch m := u.MemoryLimit; {
	case m <= 0:
		v.fail("udf.memory_limit", "must be positive, got %d", m)
	case m%wasmPage != 0:
		v.fail("udf.memory_limit", "must be a multiple of 65536 (a Wasm page), got %d", m)
	case m > maxMemoryLimit:
		v.fail("udf.memory_limit", "must be at most 4 GiB (4294967296), got %d", m)
	}
	v.positive("udf.call_timeout", u.CallTimeout)
	v.between("udf.batch_size", int64(u.BatchSize), 1, maxBatchSize)
}

func (v *validator) checkpoint(c *Checkpoint) {
	v.positive("checkpoint.interval", c.Interval)
	v.oneOf("checkpoint.mode", c.Mode, checkpointModes...)
	v.positive("checkpoint.timeout", c.Timeout)
	v.notNegative("checkpoint.min_pause", c.MinPause)
	if c.Retain < 1 {
		v.fail("checkpoint.retain", "must be at least 1, got %d", c.Retain)
	}
}

func (v *validator) restart(r *Restart) {
	v.oneOf("restart.strategy", r.Strategy, restartStrategies...)
	if r.MaxAttempts < 0 {
		v.fail("restart.max_attempts", "must not be negative, got %d", r.MaxAttempts)
	}
	v.notNegative("restart.delay", r.Delay)
	v.notNegative("restart.max_delay", r.MaxDelay)
	v.notNegative("restart.reset_after", r.ResetAfter)
	if r.Multiplier < 1 {
		v.fail("restart.multiplier", "must be at least 1, got %g", r.Multiplier)
	}
	if r.Jitter < 0 || r.Jitter > 1 {
		v.fail("restart.jitter", "must be between 0 and 1, got %g", r.Jitter)
	}
	switch r.Strategy {
	case "exponential":
		if r.MaxDelay.Duration < r.Delay.Duration {
			v.fail("restart.max_delay", "must not be less than delay (%s), got %s", r.Delay, r.MaxDelay)
		}
	case "failure_rate":
		if r.MaxAttempts != 0 {
			v.fail("restart.max_attempts", "not used by failure_rate, which bounds failures with max_failures_per_interval")
		}
		if r.MaxFailuresPerInterval < 1 {
			v.fail("restart.max_failures_per_interval", "must be at least 1, got %d", r.MaxFailuresPerInterval)
		}
		v.positive("restart.interval", r.Interval)
	}
	if r.Jitter != 0 && r.Strategy != "exponential" {
		v.fail("restart.jitter", "only used by the exponential strategy")
	}
}
