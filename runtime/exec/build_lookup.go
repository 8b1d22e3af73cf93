package exec

import (
	"log/slog"

	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/lookup"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/runtime/spec"
)

// lookupStage builds the async lookup operator of v for subtask i in front
// of next: its request function (or the spec's bucket or url), its result
// function, and fetchers that reach the job's JetStream and the hosts of
// lookups.http.allow.
func (b *builder) lookupStage(t *Task, v *plan.Vertex, i int, policy *operator.ErrorPolicy, next operator.Stage) operator.Stage {
	a := v.Op.AsyncLookup
	job := b.j.Plan.Job
	cfg := lookup.Config{
		Vertex: v.ID, Bucket: a.Bucket, URL: a.URL, Result: b.recordCall(t, v.ID, i, v.Fn),
		Capacity: a.Capacity, MaxBytes: a.MaxBytes, Timeout: a.Timeout.Duration, Retries: a.Retries,
		Ordered: a.Output == spec.LookupOrdered, BatchSize: job.UDF.BatchSize, Policy: policy, Next: next,
		Fetch: &lookup.Fetchers{JetStream: b.j.Env.JetStream, Allow: job.Lookups.AllowsHost},
	}
	if v.LookupRequest != nil {
		req := b.recordCall(t, v.ID, i, v.LookupRequest)
		cfg.Request = &req
	}
	return lookup.New(cfg)
}

// recordCall is a call of record function f on its own guest in subtask i.
func (b *builder) recordCall(t *Task, vertexID string, i int, f *plan.Func) operator.RecordCall {
	limits := b.j.Plan.Job.UDF
	pool := b.module(f).NewGuest(host.InstanceConfig{
		MemoryLimit: limits.MemoryLimit,
		CallTimeout: limits.CallTimeout.Duration,
		Attrs:       []slog.Attr{slog.String("job", b.j.ID), slog.String("vertex", vertexID), slog.Int("subtask", i)},
	})
	return operator.RecordCall{Module: f.Module, Function: f.Function, Fn: f.Index, Guest: t.stats.meter(vertexID, f.Function, pool)}
}
