package runtime

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"wasmstream.io/platform/runtime/exec"
	"wasmstream.io/platform/runtime/plan"
)

// The runtime's metrics. Task metrics are per task (chain) subtask, labelled
// with the chain head's vertex id, as Flink's network metrics are per task;
// vertex metrics are per vertex subtask. Nothing is updated per record: the
// tasks keep atomics and the collector reads them at scrape time.
var (
	vertexLabels = []string{"job_id", "job_name", "vertex"}

	descInputWatermark = prometheus.NewDesc("platform_vertex_input_watermark_seconds",
		"The vertex's input watermark (the least of its inputs' watermarks) as a Unix time.", vertexLabels, nil)
	descOutputWatermark = prometheus.NewDesc("platform_vertex_output_watermark_seconds",
		"The vertex's watermark as a Unix time.", vertexLabels, nil)
	descWatermarkLag = prometheus.NewDesc("platform_vertex_watermark_lag_seconds",
		"How far the vertex's watermark is behind the wall clock.", vertexLabels, nil)

	descJobs = prometheus.NewDesc("platform_jobs",
		"Jobs known to this process, by state.", []string{"state"}, nil)
	descJobUptime = prometheus.NewDesc("platform_job_uptime_seconds",
		"Time since the job was submitted (or resumed by this process).", jobLabels, nil)
	descJobState = prometheus.NewDesc("platform_job_state",
		"1 for the job's state, 0 for the others.", append(jobLabels, "state"), nil)
)

// jobStates are the states platform_jobs reports, each even when 0.
var jobStates = []JobState{StateCreated, StateRunning, StateRestarting, StateFailing, StateFailed, StateCancelling, StateCanceled, StateFinished}

// Collector returns the prometheus.Collector of the manager's jobs and of
// its Host's guest memory. Task, vertex and UDF series exist while their
// job is not terminal.
func (m *Manager) Collector() prometheus.Collector { return metricsCollector{m} }

type metricsCollector struct{ m *Manager }

func (metricsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		descInputWatermark, descOutputWatermark, descWatermarkLag, descJobs, descJobUptime, descJobState,
		descCheckpoints, descCheckpointsInProgress, descCheckpointDuration, descCheckpointSize, descCheckpointAlignment, descCheckpointInFlight, descRestarts,
		descHostMemoryReserved, descHostMemoryBudget,
	} {
		ch <- d
	}
	exec.DescribeMetrics(ch)
}

func (c metricsCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	jobs := make([]*job, 0, len(c.m.jobs))
	for _, j := range c.m.jobs {
		jobs = append(jobs, j)
	}
	c.m.mu.Unlock()
	states := map[JobState]int{}
	for _, j := range jobs {
		states[j.state()]++
		if tasks := j.runningTasks(); tasks != nil {
			j.collect(ch, tasks)
		}
	}
	for _, s := range jobStates {
		ch <- prometheus.MustNewConstMetric(descJobs, prometheus.GaugeValue, float64(states[s]), string(s))
	}
	collectHost(ch, c.m.cfg.Host)
}

// collect sends the metrics of a job that is not terminal.
func (j *job) collect(ch chan<- prometheus.Metric, tasks []*exec.Task) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	exec.CollectMetrics(ch, j.x, tasks)
	info := j.info()
	gauge(descJobUptime, time.Since(j.created).Seconds(), j.id, info.Name)
	for _, s := range jobStates {
		v := 0.0
		if s == info.State {
			v = 1
		}
		gauge(descJobState, v, j.id, info.Name, string(s))
	}
	j.collectWatermarks(gauge, info)
	j.collectCheckpoints(ch, info)
}

// collectWatermarks reports the watermarks the runtime puts in VertexInfo:
// a vertex's own (its output watermark) and the least of its inputs'.
func (j *job) collectWatermarks(gauge func(*prometheus.Desc, float64, ...string), info JobInfo) {
	marks := map[string]int64{}
	for _, vi := range info.Vertices {
		if vi.Watermark != nil {
			marks[vi.ID] = *vi.Watermark
		}
	}
	nowMS := time.Now().UnixMilli()
	for _, v := range j.x.Plan.Vertices {
		if w, ok := marks[v.ID]; ok {
			gauge(descOutputWatermark, float64(w)/1e3, j.id, info.Name, v.ID)
			gauge(descWatermarkLag, float64(nowMS-w)/1e3, j.id, info.Name, v.ID)
		}
		if in, ok := inputWatermark(v, marks); ok {
			gauge(descInputWatermark, float64(in)/1e3, j.id, info.Name, v.ID)
		}
	}
}

// inputWatermark is the least watermark of v's inputs; false when v has no
// input or one of them has no watermark yet.
func inputWatermark(v *plan.Vertex, marks map[string]int64) (int64, bool) {
	if len(v.In) == 0 {
		return 0, false
	}
	var least int64
	for i, e := range v.In {
		w, ok := marks[e.From.ID]
		if !ok {
			return 0, false
		}
		if i == 0 || w < least {
			least = w
		}
	}
	return least, true
}
