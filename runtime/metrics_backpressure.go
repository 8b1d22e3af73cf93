package runtime

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"wasmstream.io/platform/runtime/exec"
	"wasmstream.io/platform/runtime/plan"
)

// Backpressure levels of a subtask by its backpressured ratio, as in Flink.
const (
	LevelOK   = "OK"   // ratio <= 0.10
	LevelLow  = "LOW"  // 0.10 < ratio <= 0.5
	LevelHigh = "HIGH" // ratio > 0.5
)

// Thresholds of the backpressure diagnosis.
const (
	okRatio   = 0.10
	lowRatio  = 0.5
	busyRatio = 0.5
)

// BackpressureLevel is the level of a backpressured ratio.
func BackpressureLevel(ratio float64) string {
	switch {
	case ratio <= okRatio:
		return LevelOK
	case ratio <= lowRatio:
		return LevelLow
	}
	return LevelHigh
}

// BackpressureInfo is a job's backpressure over the last sampled interval,
// and the vertex the platform holds responsible for it.
type BackpressureInfo struct {
	Job   string   `json:"job"`
	State JobState `json:"state"`
	// Sampled is when the interval ended; nil before the first sample.
	Sampled *time.Time `json:"sampled,omitempty"`
	// IntervalMS is the length of the sampled interval.
	IntervalMS int64                `json:"interval_ms"`
	Vertices   []VertexBackpressure `json:"vertices"`
	// Bottleneck is nil when no task is backpressured.
	Bottleneck *Bottleneck `json:"bottleneck"`
}

// VertexBackpressure is one vertex's backpressure: its task's, by subtask.
type VertexBackpressure struct {
	ID   string `json:"id"`
	Task string `json:"task"`
	// Level and Ratio are the worst subtask's; Level is empty before the
	// first sample.
	Level    string                `json:"level,omitempty"`
	Ratio    float64               `json:"ratio"`
	Subtasks []SubtaskBackpressure `json:"subtasks"`
}

// SubtaskBackpressure splits one subtask's last interval. Ratio, IdleRatio
// and BusyRatio are its task's (they add up to 1); VertexBusyRatio is the
// share the vertex itself took, without the vertices chained after it and
// its waits for output buffers. The pool usages are absent for a task
// without exchange input (a source) or output.
type SubtaskBackpressure struct {
	Subtask         int      `json:"subtask"`
	Level           string   `json:"level"`
	Ratio           float64  `json:"ratio"`
	IdleRatio       float64  `json:"idle_ratio"`
	BusyRatio       float64  `json:"busy_ratio"`
	VertexBusyRatio float64  `json:"vertex_busy_ratio"`
	InPoolUsage     *float64 `json:"in_pool_usage,omitempty"`
	OutPoolUsage    *float64 `json:"out_pool_usage,omitempty"`
}

// Bottleneck names the vertex the platform holds responsible for the job's
// backpressure: the first task downstream of backpressured ones that is not
// backpressured itself but busy, and in it the vertex that takes the most
// time.
type Bottleneck struct {
	Vertex string `json:"vertex"`
	Task   string `json:"task"`
	// Subtasks are the task's busy subtasks; fewer than its parallelism
	// suggests skew.
	Subtasks []int  `json:"subtasks"`
	Reason   string `json:"reason"`
}

// Backpressure reports a job's backpressure over the last sampled interval.
func (m *Manager) Backpressure(_ context.Context, id string) (BackpressureInfo, error) {
	j, ok := m.job(id)
	if !ok {
		return BackpressureInfo{}, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	return j.backpressure(), nil
}

func (j *job) backpressure() BackpressureInfo {
	sampled, samples := j.pressure.Snapshot()
	info := BackpressureInfo{Job: j.id, State: j.state(), IntervalMS: exec.PressureInterval.Milliseconds(), Vertices: []VertexBackpressure{}}
	if !sampled.IsZero() {
		info.Sampled = &sampled
	}
	for _, v := range j.x.Plan.Vertices {
		task := j.taskName(v)
		vb := VertexBackpressure{ID: v.ID, Task: task, Subtasks: []SubtaskBackpressure{}}
		for i := range j.x.Plan.Vertex(task).Parallelism {
			s, ok := samples[exec.SubtaskKey{Task: task, Subtask: i}]
			if !ok {
				continue
			}
			ratio := round3(s.Backpressured)
			sb := SubtaskBackpressure{
				Subtask: i, Level: BackpressureLevel(ratio), Ratio: ratio,
				IdleRatio: round3(s.Idle), BusyRatio: round3(s.Busy), VertexBusyRatio: round3(s.VertexBusy[v.ID]),
			}
			if s.HasInput {
				sb.InPoolUsage = ptr(round3(s.InPoolUsage))
			}
			if s.HasOutput {
				sb.OutPoolUsage = ptr(round3(s.OutPoolUsage))
			}
			if len(vb.Subtasks) == 0 || sb.Ratio > vb.Ratio {
				vb.Ratio = sb.Ratio
			}
			vb.Subtasks = append(vb.Subtasks, sb)
		}
		if len(vb.Subtasks) > 0 {
			vb.Level = BackpressureLevel(vb.Ratio)
		}
		info.Vertices = append(info.Vertices, vb)
	}
	info.Bottleneck = j.bottleneck(samples)
	return info
}

// taskLoad is one task's worst subtask figures over the last interval.
type taskLoad struct {
	head                *plan.Vertex
	sampled             bool
	backpressured, busy float64
	inPool, outPool     float64
	hasInput, hasOutput bool
	busySubtasks        []int
	vertexBusy          map[string]float64
	// consumers are the tasks the task sends to through the exchange.
	consumers []string
}

// bottleneck applies the diagnosis of Flink's backpressure monitoring: a
// backpressured task waits for a slower consumer, so the root is the first
// task downstream of backpressured ones that is not backpressured itself
// and busy; high input buffer usage with low output buffer usage confirms
// it. Among several such tasks, the busiest wins, then the first in
// topological order.
func (j *job) bottleneck(samples map[exec.SubtaskKey]exec.SubtaskSample) *Bottleneck {
	loads := map[string]*taskLoad{}
	var order []*taskLoad
	for _, v := range j.x.Plan.Vertices {
		if j.taskName(v) != v.ID {
			continue
		}
		l := &taskLoad{head: v, vertexBusy: map[string]float64{}}
		for i := range v.Parallelism {
			s, ok := samples[exec.SubtaskKey{Task: v.ID, Subtask: i}]
			if !ok {
				continue
			}
			l.sampled = true
			l.backpressured = max(l.backpressured, s.Backpressured)
			l.busy = max(l.busy, s.Busy)
			l.inPool, l.outPool = max(l.inPool, s.InPoolUsage), max(l.outPool, s.OutPoolUsage)
			l.hasInput, l.hasOutput = s.HasInput, s.HasOutput
			if s.Busy >= busyRatio {
				l.busySubtasks = append(l.busySubtasks, i)
			}
			for id, b := range s.VertexBusy {
				l.vertexBusy[id] = max(l.vertexBusy[id], b)
			}
		}
		for _, u := range chainOf(v) {
			for _, e := range u.Out {
				if !e.Chained() {
					l.consumers = append(l.consumers, j.taskName(e.To))
				}
			}
		}
		loads[v.ID] = l
		order = append(order, l)
	}
	var best, cause *taskLoad
	for _, up := range order {
		if !up.sampled || up.backpressured <= okRatio {
			continue
		}
		for _, name := range up.consumers {
			d := loads[name]
			if !d.sampled || d.backpressured > okRatio || d.busy < busyRatio {
				continue
			}
			if best == nil || d.busy > best.busy {
				best, cause = d, up
			} else if d == best && up.backpressured > cause.backpressured {
				cause = up
			}
		}
	}
	if best == nil {
		return nil
	}
	return best.diagnosis(cause)
}

// diagnosis names the vertex of bottleneck task l that takes the most time
// and says why, citing the backpressured task up.
func (l *taskLoad) diagnosis(up *taskLoad) *Bottleneck {
	vs := chainOf(l.head)
	vertex := vs[0]
	for _, v := range vs[1:] {
		if l.vertexBusy[v.ID] > l.vertexBusy[vertex.ID] {
			vertex = v
		}
	}
	var r strings.Builder
	fmt.Fprintf(&r, "task %s is backpressured (%s: %.2f of the time waiting for output buffers, out_pool_usage %.2f); ",
		up.head.ID, BackpressureLevel(up.backpressured), up.backpressured, up.outPool)
	fmt.Fprintf(&r, "its consumer, task %s, is not backpressured (%.2f) but busy %.2f of the time", l.head.ID, l.backpressured, l.busy)
	if l.hasInput {
		fmt.Fprintf(&r, ", in_pool_usage %.2f", l.inPool)
	}
	if l.hasOutput {
		fmt.Fprintf(&r, ", out_pool_usage %.2f", l.outPool)
	}
	switch {
	case l.hasInput && l.inPool > lowRatio && (!l.hasOutput || l.outPool <= lowRatio):
		r.WriteString(": its input buffers fill while its output does not, so it processes slower than records arrive")
	default:
		r.WriteString(": it processes slower than records arrive")
	}
	if len(vs) > 1 {
		fmt.Fprintf(&r, "; in that task, vertex %s takes %.2f of the time", vertex.ID, l.vertexBusy[vertex.ID])
	}
	return &Bottleneck{Vertex: vertex.ID, Task: l.head.ID, Subtasks: l.busySubtasks, Reason: r.String()}
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

func ptr[T any](v T) *T { return &v }
