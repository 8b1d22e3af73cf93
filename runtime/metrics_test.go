package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime/exec"
)

// gather collects the manager's metrics through a pedantic registry, which
// also checks them against their descriptions.
func gather(t *testing.T, m *Manager) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(m.Collector())
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range families {
		out[f.GetName()] = f
	}
	return out
}

// series lists a family's label sets as "name=value,..." strings, sorted.
func series(f *dto.MetricFamily) []string {
	var out []string
	for _, m := range f.GetMetric() {
		var parts []string
		for _, l := range m.GetLabel() {
			parts = append(parts, l.GetName()+"="+l.GetValue())
		}
		out = append(out, strings.Join(parts, ","))
	}
	slices.Sort(out)
	return out
}

// lookup is the value of a family's series with these labels, if there is
// one; for a histogram, its count.
func lookup(f *dto.MetricFamily, labels string) (float64, bool) {
	for _, m := range f.GetMetric() {
		var parts []string
		for _, l := range m.GetLabel() {
			parts = append(parts, l.GetName()+"="+l.GetValue())
		}
		if strings.Join(parts, ",") != labels {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// value is the value of a family's series with these labels, which must
// exist.
func value(t *testing.T, f *dto.MetricFamily, labels string) float64 {
	t.Helper()
	v, ok := lookup(f, labels)
	if !ok {
		t.Fatalf("%s has no series %s: %v", f.GetName(), labels, series(f))
	}
	return v
}

// atLeast reports whether the manager's series exists with at least min.
func atLeast(t *testing.T, m *Manager, family, labels string, min float64) bool {
	v, ok := lookup(gather(t, m)[family], labels)
	return ok && v >= min
}

func TestMetricsOfARunningJob(t *testing.T) {
	m := newTestManager(t)
	mod, err := m.UploadModule(context.Background(), wasmbuild.UDF(t, "upper-wat"))
	if err != nil {
		t.Fatal(err)
	}
	info, err := m.SubmitJob(context.Background(), []byte(fmt.Sprintf(`
name: metered
sources: [{id: gen, generator: {kind: sequence, rate: 2000}}]
operators: [{id: up, input: gen, parallelism: 2, map: {module: %s, function: upper}}]
sinks: [{id: out, input: up, parallelism: 2, discard: true}]
`, mod.ID)))
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID
	// Wait until both subtasks of up have called the module.
	waitBackpressure(t, m, id, func(BackpressureInfo) bool {
		return atLeast(t, m, "platform_udf_call_duration_seconds", "function=upper,job_id="+id+",job_name=metered,subtask=0,vertex=up", 1) &&
			atLeast(t, m, "platform_udf_call_duration_seconds", "function=upper,job_id="+id+",job_name=metered,subtask=1,vertex=up", 1)
	})
	families := gather(t, m)
	wantNames := []string{
		"platform_exchange_buffers_out_total", "platform_exchange_bytes_in_total", "platform_exchange_bytes_out_total",
		"platform_exchange_exclusive_buffers_in_use", "platform_exchange_floating_buffers_in_use",
		"platform_exchange_in_pool_usage_ratio", "platform_exchange_input_queue_buffers", "platform_exchange_out_pool_usage_ratio",
		"platform_host_memory_budget_bytes", "platform_host_memory_reserved_bytes",
		"platform_job_restarts_total", "platform_job_state", "platform_job_uptime_seconds", "platform_jobs", "platform_task_backpressured_seconds_total", "platform_task_busy_seconds_total",
		"platform_task_idle_seconds_total", "platform_udf_call_duration_seconds", "platform_udf_instances_created_total",
		"platform_udf_memory_bytes", "platform_udf_traps_total", "platform_vertex_records_dead_lettered_total",
		"platform_vertex_records_in_total", "platform_vertex_records_out_total", "platform_vertex_records_skipped_total",
		"platform_vertex_udf_errors_total",
	}
	if names := slices.Sorted(maps.Keys(families)); !slices.Equal(names, wantNames) {
		t.Fatalf("families\n%v\nwant\n%v", names, wantNames)
	}
	task := func(vertex string, subtask int) string {
		return fmt.Sprintf("job_id=%s,job_name=metered,subtask=%d,vertex=%s", id, subtask, vertex)
	}
	udf := func(subtask int) string {
		return fmt.Sprintf("function=upper,job_id=%s,job_name=metered,subtask=%d,vertex=up", id, subtask)
	}
	tests := []struct {
		family string
		series []string
	}{
		// Three tasks: gen, and up twice with out chained to it.
		{"platform_task_busy_seconds_total", []string{task("gen", 0), task("up", 0), task("up", 1)}},
		{"platform_exchange_out_pool_usage_ratio", []string{task("gen", 0)}},
		{"platform_exchange_in_pool_usage_ratio", []string{task("up", 0), task("up", 1)}},
		{"platform_vertex_records_in_total", []string{task("gen", 0), task("out", 0), task("up", 0), task("out", 1), task("up", 1)}},
		{"platform_udf_instances_created_total", []string{udf(0), udf(1)}},
		{"platform_jobs", []string{"state=CANCELED", "state=CANCELLING", "state=CREATED", "state=FAILED", "state=FAILING",
			"state=FINISHED", "state=RESTARTING", "state=RUNNING"}},
	}
	for _, tt := range tests {
		if got := series(families[tt.family]); !slices.Equal(got, tt.series) {
			t.Errorf("%s series\n%v\nwant\n%v", tt.family, got, tt.series)
		}
	}
	for _, s := range []int{0, 1} {
		if n := value(t, families["platform_udf_instances_created_total"], udf(s)); n != 1 {
			t.Errorf("subtask %d created %g instances, want 1", s, n)
		}
		for _, kind := range exec.TrapKinds {
			if n := value(t, families["platform_udf_traps_total"], fmt.Sprintf("function=upper,job_id=%s,job_name=metered,kind=%s,subtask=%d,vertex=up", id, kind, s)); n != 0 {
				t.Errorf("subtask %d: %g traps of kind %s", s, n, kind)
			}
		}
	}
	if n := value(t, families["platform_jobs"], "state=RUNNING"); n != 1 {
		t.Errorf("%g running jobs, want 1", n)
	}
	// The host's guest memory holds at least the two live instances'.
	guests := value(t, families["platform_udf_memory_bytes"], udf(0)) + value(t, families["platform_udf_memory_bytes"], udf(1))
	if reserved := value(t, families["platform_host_memory_reserved_bytes"], ""); guests <= 0 || reserved < guests {
		t.Errorf("host memory reserved %g, the instances' memory %g: want at least that, and more than 0", reserved, guests)
	}
	if budget := value(t, families["platform_host_memory_budget_bytes"], ""); budget != float64(m.cfg.Host.MemoryBudget()) {
		t.Errorf("host memory budget %g, want %d", budget, m.cfg.Host.MemoryBudget())
	}

	if _, err := m.CancelJob(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	families = gather(t, m)
	wantNames = []string{"platform_host_memory_budget_bytes", "platform_host_memory_reserved_bytes", "platform_jobs"}
	if names := slices.Sorted(maps.Keys(families)); !slices.Equal(names, wantNames) {
		t.Errorf("after cancel: families %v, want %v", names, wantNames)
	}
	// The job's instances are idle now, and keep their memory until a
	// guest short of budget needs it.
	if reserved := value(t, families["platform_host_memory_reserved_bytes"], ""); reserved != float64(m.cfg.Host.MemoryReserved()) {
		t.Errorf("after cancel: host memory reserved %g, want %d", reserved, m.cfg.Host.MemoryReserved())
	}
	if n := value(t, families["platform_jobs"], "state=CANCELED"); n != 1 {
		t.Errorf("%g canceled jobs, want 1", n)
	}
}

// TestCheckpointMetrics runs a job that takes checkpoints and waits for
// their metrics.
func TestCheckpointMetrics(t *testing.T) {
	m := newTestManager(t)
	info, err := m.SubmitJob(context.Background(), []byte(`
name: checkpointed
checkpoint: {interval: 50ms}
sources: [{id: gen, generator: {kind: sequence, rate: 1000}}]
sinks: [{id: out, input: gen, discard: true}]
`))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = m.CancelJob(context.Background(), info.ID) }()
	job := "job_id=" + info.ID + ",job_name=checkpointed"
	waitBackpressure(t, m, info.ID, func(BackpressureInfo) bool {
		return atLeast(t, m, "platform_checkpoints_total", job+",outcome=completed", 2)
	})
	families := gather(t, m)
	for _, name := range []string{"platform_checkpoint_last_duration_seconds", "platform_checkpoint_last_size_bytes",
		"platform_checkpoint_last_alignment_seconds", "platform_checkpoint_last_in_flight_bytes", "platform_job_restarts_total",
		"platform_checkpoints_in_progress", "platform_job_uptime_seconds"} {
		if got := series(families[name]); !slices.Equal(got, []string{job}) {
			t.Errorf("%s series %v, want [%s]", name, got, job)
		}
	}
	if n := value(t, families["platform_checkpoints_total"], job+",outcome=failed"); n != 0 {
		t.Errorf("%g failed checkpoints", n)
	}
	if n := value(t, families["platform_job_restarts_total"], job); n != 0 {
		t.Errorf("%g restarts", n)
	}
}

// syncBuffer is a log destination safe for the tasks' goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Split(strings.TrimSpace(s.b.String()), "\n")
}

// TestTaskLogsNameTheSubtask fails a task (key_by a field the records lack)
// and checks that its JSON log line names the job, vertex and subtask.
func TestTaskLogsNameTheSubtask(t *testing.T) {
	var logs syncBuffer
	m, err := NewManager(context.Background(), Config{
		DataDir: t.TempDir(), Host: newTestHost(t), Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	mod, err := m.UploadModule(context.Background(), wasmbuild.UDF(t, "upper-wat"))
	if err != nil {
		t.Fatal(err)
	}
	info, err := m.SubmitJob(context.Background(), []byte(fmt.Sprintf(`
name: keyless
sources: [{id: gen, generator: {kind: sequence, count: 10}}]
operators: [{id: up, input: gen, key_by: {field: nope}, map: {module: %s, function: upper}}]
sinks: [{id: out, input: up, discard: true}]
`, mod.ID)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if info, err = m.WaitJob(ctx, info.ID); err != nil || info.State != StateFailed {
		t.Fatalf("job %s, %v; want FAILED", info.State, err)
	}
	var failed []map[string]any
	for _, line := range logs.lines() {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == "task failed" {
			failed = append(failed, rec)
		}
	}
	if len(failed) != 1 {
		t.Fatalf("%d task failed lines:\n%s", len(failed), strings.Join(logs.lines(), "\n"))
	}
	want := map[string]any{"job": info.ID, "job_name": "keyless", "vertex": "gen", "subtask": float64(0), "level": "ERROR"}
	for k, v := range want {
		if failed[0][k] != v {
			t.Errorf("%s = %v, want %v in %v", k, failed[0][k], v, failed[0])
		}
	}
}
