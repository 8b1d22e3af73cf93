package runtime

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime/exec"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/runtime/spec"
)

func TestBackpressureLevel(t *testing.T) {
	for _, tt := range []struct {
		ratio float64
		want  string
	}{{0, LevelOK}, {0.1, LevelOK}, {0.100001, LevelLow}, {0.5, LevelLow}, {0.51, LevelHigh}, {1, LevelHigh}} {
		if got := BackpressureLevel(tt.ratio); got != tt.want {
			t.Errorf("BackpressureLevel(%g) = %s, want %s", tt.ratio, got, tt.want)
		}
	}
}

// planJob builds a job around a spec whose operators may use the upper-wat
// module as %[1]s.
func planJob(t *testing.T, m *Manager, modID, format string) *job {
	t.Helper()
	js, err := spec.Parse(fmt.Appendf(nil, format, modID))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(js, m.lookupDescription)
	if err != nil {
		t.Fatal(err)
	}
	return &job{id: "j", x: &exec.Job{ID: "j", Plan: p}, pressure: exec.NewPressureSampler()}
}

func TestBottleneckDiagnosis(t *testing.T) {
	m := newTestManager(t)
	mod, err := m.UploadModule(context.Background(), wasmbuild.UDF(t, "upper-wat"))
	if err != nil {
		t.Fatal(err)
	}
	// Three tasks: gen, up, out.
	threeTasks := planJob(t, m, mod.ID, `
name: three
sources: [{id: gen, generator: {kind: sequence}}]
operators: [{id: up, input: gen, map: {module: %[1]s, function: upper}}]
sinks: [{id: out, input: up, parallelism: 2, discard: true}]
`)
	threeTasks.x.Plan.Vertex("up").In[0].Ship = plan.ShipRebalance
	// Two tasks: gen, and up with out chained to it.
	chained := planJob(t, m, mod.ID, `
name: chained
sources: [{id: gen, generator: {kind: sequence}}]
operators: [{id: up, input: gen, parallelism: 2, map: {module: %[1]s, function: upper}}]
sinks: [{id: out, input: up, parallelism: 2, discard: true}]
`)
	source := func(bp, busy float64) exec.SubtaskSample {
		return exec.SubtaskSample{Backpressured: bp, Busy: busy, Idle: 1 - bp - busy, HasOutput: true, OutPoolUsage: bp,
			VertexBusy: map[string]float64{"gen": busy}}
	}
	tests := []struct {
		name    string
		j       *job
		samples map[exec.SubtaskKey]exec.SubtaskSample
		want    *Bottleneck
	}{{
		name: "no backpressure",
		j:    threeTasks,
		samples: map[exec.SubtaskKey]exec.SubtaskSample{
			{Task: "gen", Subtask: 0}: source(0.05, 0.9),
			{Task: "up", Subtask: 0}:  {Busy: 0.9, HasInput: true, HasOutput: true, VertexBusy: map[string]float64{"up": 0.9}},
		},
	}, {
		name: "the source's consumer",
		j:    threeTasks,
		samples: map[exec.SubtaskKey]exec.SubtaskSample{
			{Task: "gen", Subtask: 0}: source(0.9, 0.1),
			{Task: "up", Subtask: 0}: {Busy: 0.95, Idle: 0.05, HasInput: true, HasOutput: true, InPoolUsage: 0.9, OutPoolUsage: 0.1,
				VertexBusy: map[string]float64{"up": 0.95}},
			{Task: "out", Subtask: 0}: {Busy: 0.3, Idle: 0.7, HasInput: true, VertexBusy: map[string]float64{"out": 0.3}},
			{Task: "out", Subtask: 1}: {Busy: 0.3, Idle: 0.7, HasInput: true, VertexBusy: map[string]float64{"out": 0.3}},
		},
		want: &Bottleneck{Vertex: "up", Task: "up", Subtasks: []int{0}, Reason: "task gen is backpressured (HIGH: 0.90 of the time " +
			"waiting for output buffers, out_pool_usage 0.90); its consumer, task up, is not backpressured (0.00) but busy 0.95 " +
			"of the time, in_pool_usage 0.90, out_pool_usage 0.10: its input buffers fill while its output does not, so it " +
			"processes slower than records arrive"},
	}, {
		name: "backpressure passed on to the source",
		j:    threeTasks,
		samples: map[exec.SubtaskKey]exec.SubtaskSample{
			{Task: "gen", Subtask: 0}: source(0.9, 0.1),
			{Task: "up", Subtask: 0}: {Backpressured: 0.6, Busy: 0.3, Idle: 0.1, HasInput: true, HasOutput: true, InPoolUsage: 1, OutPoolUsage: 1,
				VertexBusy: map[string]float64{"up": 0.3}},
			{Task: "out", Subtask: 0}: {Busy: 0.99, HasInput: true, InPoolUsage: 1, VertexBusy: map[string]float64{"out": 0.99}},
			{Task: "out", Subtask: 1}: {Busy: 0.2, Idle: 0.8, HasInput: true, VertexBusy: map[string]float64{"out": 0.2}},
		},
		want: &Bottleneck{Vertex: "out", Task: "out", Subtasks: []int{0}, Reason: "task up is backpressured (HIGH: 0.60 of the time " +
			"waiting for output buffers, out_pool_usage 1.00); its consumer, task out, is not backpressured (0.00) but busy 0.99 " +
			"of the time, in_pool_usage 1.00: its input buffers fill while its output does not, so it processes slower than records arrive"},
	}, {
		name: "an idle consumer is not blamed",
		j:    threeTasks,
		samples: map[exec.SubtaskKey]exec.SubtaskSample{
			{Task: "gen", Subtask: 0}: source(0.9, 0.1),
			{Task: "up", Subtask: 0}:  {Busy: 0.2, Idle: 0.8, HasInput: true, HasOutput: true, VertexBusy: map[string]float64{"up": 0.2}},
		},
	}, {
		name: "the slow vertex of a chain",
		j:    chained,
		samples: map[exec.SubtaskKey]exec.SubtaskSample{
			{Task: "gen", Subtask: 0}: source(0.95, 0.05),
			{Task: "up", Subtask: 0}:  {Busy: 0.98, HasInput: true, InPoolUsage: 0.8, VertexBusy: map[string]float64{"up": 0.1, "out": 0.85}},
			{Task: "up", Subtask: 1}:  {Busy: 0.97, HasInput: true, InPoolUsage: 0.7, VertexBusy: map[string]float64{"up": 0.12, "out": 0.84}},
		},
		want: &Bottleneck{Vertex: "out", Task: "up", Subtasks: []int{0, 1}, Reason: "task gen is backpressured (HIGH: 0.95 of the " +
			"time waiting for output buffers, out_pool_usage 0.95); its consumer, task up, is not backpressured (0.00) but busy " +
			"0.98 of the time, in_pool_usage 0.80: its input buffers fill while its output does not, so it processes slower than " +
			"records arrive; in that task, vertex out takes 0.85 of the time"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.j.bottleneck(tt.samples)
			if (got == nil) != (tt.want == nil) || got != nil && (got.Vertex != tt.want.Vertex || got.Task != tt.want.Task ||
				!slices.Equal(got.Subtasks, tt.want.Subtasks) || got.Reason != tt.want.Reason) {
				t.Fatalf("bottleneck\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

// TestBackpressureOfASlowSink runs a source at full speed into a throttled
// sink and waits until the sampler blames the sink.
func TestBackpressureOfASlowSink(t *testing.T) {
	m := newTestManager(t)
	mod, err := m.UploadModule(context.Background(), wasmbuild.UDF(t, "upper-wat"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		spec     string
		vertex   string
		task     string
		subtasks []int
	}{{
		name: "sink in its own task",
		spec: `
name: slow-sink
sources: [{id: gen, generator: {kind: sequence}}]
sinks: [{id: slow, input: gen, parallelism: 2, discard: true, throttle: 2000}]
`,
		vertex: "slow", task: "slow", subtasks: []int{0, 1},
	}, {
		name: "sink chained to a map",
		spec: fmt.Sprintf(`
name: slow-chained-sink
sources: [{id: gen, generator: {kind: sequence}}]
operators: [{id: up, input: gen, parallelism: 2, map: {module: %s, function: upper}}]
sinks: [{id: slow, input: up, parallelism: 2, discard: true, throttle: 2000}]
`, mod.ID),
		vertex: "slow", task: "up", subtasks: []int{0, 1},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := m.SubmitJob(context.Background(), []byte(tt.spec))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _, _ = m.CancelJob(context.Background(), info.ID) }()
			bp := waitBackpressure(t, m, info.ID, func(bp BackpressureInfo) bool {
				return bp.Bottleneck != nil && vertexLevel(bp, "gen") == LevelHigh
			})
			b := bp.Bottleneck
			if b.Vertex != tt.vertex || b.Task != tt.task || !slices.Equal(b.Subtasks, tt.subtasks) {
				t.Fatalf("bottleneck %+v, want vertex %s, task %s, subtasks %v", b, tt.vertex, tt.task, tt.subtasks)
			}
			for _, v := range bp.Vertices {
				if v.ID == tt.vertex && v.Level != LevelOK {
					t.Errorf("the slow vertex is %s, want %s: %+v", v.Level, LevelOK, v)
				}
			}
		})
	}
}

func waitBackpressure(t *testing.T, m *Manager, id string, done func(BackpressureInfo) bool) BackpressureInfo {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		bp, err := m.Backpressure(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if done(bp) {
			return bp
		}
		if time.Now().After(deadline) {
			t.Fatalf("backpressure still %+v", bp)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func vertexLevel(bp BackpressureInfo, id string) string {
	for _, v := range bp.Vertices {
		if v.ID == id {
			return v.Level
		}
	}
	return ""
}
