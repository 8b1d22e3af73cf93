package exec

import (
	"github.com/prometheus/client_golang/prometheus"

	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
)

// Canary runs part of a job's key space on another version of its keyed
// operators: each subtask of a keyed vertex whose key groups all lie in
// [First, Last] runs the vertex as Plan has it (its functions and
// settings), the other subtasks run the job's own. Key groups are the unit
// of the split because keyed state, timers and windows are kept per key
// group by the host: both versions read and write the same state, and a
// subtask is the smallest part that runs one guest, so a canary covers
// whole subtasks (the runtime checks the range against them).
// Unkeyed vertices (sources, record functions, key selectors) run the
// job's own version.
type Canary struct {
	// Plan is the canary version's plan, of the job's graph shape and
	// parallelism.
	Plan        *plan.Plan
	First, Last int
}

// Canary versions, as the metrics label them.
const (
	VersionStable = "stable"
	VersionCanary = "canary"
)

// Changes reports whether the canary runs another version of v: v is
// keyed (it reads a hash edge) and the canary plan gives it other
// functions.
func (c *Canary) Changes(v *plan.Vertex) bool {
	nv := c.Plan.Vertex(v.ID)
	return nv != nil && Keyed(v) && !sameFuncs(v, nv)
}

// Runs reports whether subtask i of v runs the canary version, the
// job's max parallelism being maxParallelism.
func (c *Canary) Runs(maxParallelism int, v *plan.Vertex, i int) bool {
	if c == nil || !c.Changes(v) {
		return false
	}
	r := state.RangeOf(maxParallelism, v.Parallelism, i)
	return r.Len() > 0 && r.First >= c.First && r.Last <= c.Last
}

// Keyed reports whether v reads a hash edge: its records, state, timers
// and windows are partitioned by key group.
func Keyed(v *plan.Vertex) bool {
	for _, e := range v.In {
		if e.Ship == plan.ShipHash {
			return true
		}
	}
	return false
}

// sameFuncs reports whether a and b run the same module functions.
func sameFuncs(a, b *plan.Vertex) bool {
	fa, fb := vertexFuncs(a), vertexFuncs(b)
	if len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if (fa[i] == nil) != (fb[i] == nil) || fa[i] != nil && *fa[i] != *fb[i] {
			return false
		}
	}
	return true
}

// vertexFuncs are the module functions a vertex runs, nil where it has
// none, in a fixed order.
func vertexFuncs(v *plan.Vertex) []*plan.Func {
	var gap *plan.Func
	if v.Window != nil {
		gap = v.Window.GapFn
	}
	return []*plan.Func{v.Fn, v.OnTimer, v.Broadcast, v.LookupRequest, gap}
}

// canaryVertex is the vertex subtask i of v runs: v, or the canary's
// version of it, with v's edges (which the run's exchange is built of).
func (b *builder) canaryVertex(v *plan.Vertex, i int) *plan.Vertex {
	c := b.j.Canary
	if !c.Runs(b.j.Plan.Job.MaxParallelism, v, i) {
		return v
	}
	cv := *c.Plan.Vertex(v.ID)
	cv.In, cv.Out = v.In, v.Out
	return &cv
}

// CanaryFigures are one version's figures of a vertex the canary
// changes, summed over the subtasks that run it.
type CanaryFigures struct {
	Vertex  string `json:"vertex"`
	Version string `json:"version"`
	// Subtasks are the vertex's subtasks that run the version.
	Subtasks   []int `json:"subtasks"`
	RecordsIn  int64 `json:"records_in"`
	RecordsOut int64 `json:"records_out"`
	UDFErrors  int64 `json:"udf_errors"`
	// Calls counts the calls into the version's Wasm functions (one a
	// batch) in the current run, and CallSeconds is their total
	// duration; MeanCallSeconds is their mean.
	Calls           uint64  `json:"calls"`
	CallSeconds     float64 `json:"call_seconds"`
	MeanCallSeconds float64 `json:"mean_call_seconds"`
	// buckets is the calls' cumulative histogram, for the metrics.
	buckets map[float64]uint64
}

// CanaryFigures are the figures of each version of each vertex the
// canary changes, stable first; tasks are the run's, nil before it runs.
// Nil when the job runs no canary.
func (j *Job) CanaryFigures(tasks []*Task) []CanaryFigures {
	c := j.Canary
	if c == nil {
		return nil
	}
	var out []CanaryFigures
	for _, v := range j.Plan.Vertices {
		if !c.Changes(v) {
			continue
		}
		stable := CanaryFigures{Vertex: v.ID, Version: VersionStable, buckets: map[float64]uint64{}}
		canary := CanaryFigures{Vertex: v.ID, Version: VersionCanary, buckets: map[float64]uint64{}}
		for i, cs := range j.Counters[v.ID] {
			f := &stable
			if c.Runs(j.Plan.Job.MaxParallelism, v, i) {
				f = &canary
			}
			f.Subtasks = append(f.Subtasks, i)
			f.RecordsIn += cs.In.Load()
			f.RecordsOut += cs.Out.Load()
			f.UDFErrors += cs.UDFErrors.Load()
		}
		for _, t := range tasks {
			f := &stable
			if c.Runs(j.Plan.Job.MaxParallelism, v, t.subtask) {
				f = &canary
			}
			for _, p := range t.stats.pools {
				// A key selector's pool is named after the vertex it
				// keys for, in the task before it: only v's own task's
				// pools are v's.
				if t.name != v.ID || p.vertex != v.ID {
					continue
				}
				count, sum, buckets := p.calls.snapshot()
				f.Calls += count
				f.CallSeconds += sum
				for le, n := range buckets {
					f.buckets[le] += n
				}
			}
		}
		for _, f := range []*CanaryFigures{&stable, &canary} {
			if f.Calls > 0 {
				f.MeanCallSeconds = f.CallSeconds / float64(f.Calls)
			}
		}
		out = append(out, stable, canary)
	}
	return out
}

// The canary's metrics: a job's figures of each vertex the canary
// changes, by version (stable or canary).
var (
	canaryLabels = []string{"job_id", "job_name", "vertex", "version"}

	descCanaryRecordsIn = prometheus.NewDesc("platform_canary_records_in_total",
		"Records that entered the subtasks of a vertex running one version (stable or canary) of a job running a canary.", canaryLabels, nil)
	descCanaryRecordsOut = prometheus.NewDesc("platform_canary_records_out_total",
		"Records the subtasks of a vertex running one version (stable or canary) emitted.", canaryLabels, nil)
	descCanaryUDFErrors = prometheus.NewDesc("platform_canary_udf_errors_total",
		"Records that failed in the subtasks of a vertex running one version (stable or canary).", canaryLabels, nil)
	descCanaryCall = prometheus.NewDesc("platform_canary_udf_call_duration_seconds",
		"Duration of one call (one batch) into the Wasm functions of a vertex's version (stable or canary), in the current run.", canaryLabels, nil)
)

// collectCanary sends the canary metrics of job j.
func collectCanary(ch chan<- prometheus.Metric, j *Job, tasks []*Task) {
	for _, f := range j.CanaryFigures(tasks) {
		l := []string{j.ID, j.Plan.Job.Name, f.Vertex, f.Version}
		ch <- prometheus.MustNewConstMetric(descCanaryRecordsIn, prometheus.CounterValue, float64(f.RecordsIn), l...)
		ch <- prometheus.MustNewConstMetric(descCanaryRecordsOut, prometheus.CounterValue, float64(f.RecordsOut), l...)
		ch <- prometheus.MustNewConstMetric(descCanaryUDFErrors, prometheus.CounterValue, float64(f.UDFErrors), l...)
		ch <- prometheus.MustNewConstHistogram(descCanaryCall, f.Calls, f.CallSeconds, f.buckets, l...)
	}
}
