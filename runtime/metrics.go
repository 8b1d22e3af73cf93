package runtime

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"wasmstream.io/platform/runtime/plan"
)

// The runtime's metrics. Task metrics are per task (chain) subtask, labelled
// with the chain head's vertex id, as Flink's network metrics are per task;
// vertex metrics are per vertex subtask. Nothing is updated per record: the
// tasks keep atomics and the collector reads them at scrape time.
var (
	taskLabels   = []string{"job", "vertex", "subtask"}
	udfLabels    = []string{"job", "vertex", "subtask", "function"}
	vertexLabels = []string{"job", "vertex"}

	descTaskBusy = prometheus.NewDesc("platform_task_busy_seconds_total",
		"Time the task spent neither idle nor backpressured (wall time less idle and backpressured time).", taskLabels, nil)
	descTaskIdle = prometheus.NewDesc("platform_task_idle_seconds_total",
		"Time the task spent waiting for input.", taskLabels, nil)
	descTaskBackpressured = prometheus.NewDesc("platform_task_backpressured_seconds_total",
		"Time the task spent waiting for free output buffers.", taskLabels, nil)

	descBytesIn = prometheus.NewDesc("platform_exchange_bytes_in_total",
		"Bytes of the exchange buffers the task read.", taskLabels, nil)
	descBytesOut = prometheus.NewDesc("platform_exchange_bytes_out_total",
		"Bytes of the exchange buffers the task sent.", taskLabels, nil)
	descBuffersOut = prometheus.NewDesc("platform_exchange_buffers_out_total",
		"Exchange data buffers the task sent.", taskLabels, nil)
	descInPool = prometheus.NewDesc("platform_exchange_in_pool_usage_ratio",
		"Share of the task's input buffers (exclusive and floating) holding data not yet processed.", taskLabels, nil)
	descOutPool = prometheus.NewDesc("platform_exchange_out_pool_usage_ratio",
		"Share of the task's output buffer pools in use, averaged over its output edges.", taskLabels, nil)
	descExclusive = prometheus.NewDesc("platform_exchange_exclusive_buffers_in_use",
		"Exclusive input buffers (channel credits) holding data.", taskLabels, nil)
	descFloating = prometheus.NewDesc("platform_exchange_floating_buffers_in_use",
		"Floating input buffers holding data.", taskLabels, nil)
	descQueued = prometheus.NewDesc("platform_exchange_input_queue_buffers",
		"Buffers sent to the task and not yet taken by it.", taskLabels, nil)

	descRecordsIn = prometheus.NewDesc("platform_vertex_records_in_total",
		"Records that entered the vertex.", taskLabels, nil)
	descRecordsOut = prometheus.NewDesc("platform_vertex_records_out_total",
		"Records the vertex emitted (for a sink: wrote).", taskLabels, nil)
	descUDFErrors = prometheus.NewDesc("platform_vertex_udf_errors_total",
		"Records that failed in a UDF or a built-in record function.", taskLabels, nil)
	descSkipped = prometheus.NewDesc("platform_vertex_records_skipped_total",
		"Failed records skipped under on_udf_error: skip.", taskLabels, nil)
	descDeadLettered = prometheus.NewDesc("platform_vertex_records_dead_lettered_total",
		"Failed records published to the dead-letter subject.", taskLabels, nil)

	descInputWatermark = prometheus.NewDesc("platform_vertex_input_watermark_seconds",
		"The vertex's input watermark (the least of its inputs' watermarks) as a Unix time.", vertexLabels, nil)
	descOutputWatermark = prometheus.NewDesc("platform_vertex_output_watermark_seconds",
		"The vertex's watermark as a Unix time.", vertexLabels, nil)
	descWatermarkLag = prometheus.NewDesc("platform_vertex_watermark_lag_seconds",
		"How far the vertex's watermark is behind the wall clock.", vertexLabels, nil)

	descUDFCall = prometheus.NewDesc("platform_udf_call_duration_seconds",
		"Duration of one call into a Wasm function (one batch).", udfLabels, nil)
	descUDFTraps = prometheus.NewDesc("platform_udf_traps_total",
		"Calls into a Wasm function that failed inside the guest, by kind (trap, deadline, memory_limit, exit, bad_output).",
		append(udfLabels, "kind"), nil)
	descUDFInstances = prometheus.NewDesc("platform_udf_instances_created_total",
		"Wasm instances the task created for the function.", udfLabels, nil)
	descUDFMemory = prometheus.NewDesc("platform_udf_memory_bytes",
		"Linear memory of the function's live Wasm instance.", udfLabels, nil)

	descJobs = prometheus.NewDesc("platform_jobs",
		"Jobs known to this process, by state.", []string{"state"}, nil)
)

// jobStates are the states platform_jobs reports, each even when 0.
var jobStates = []JobState{StateCreated, StateRunning, StateRestarting, StateFailing, StateFailed, StateCancelling, StateCanceled, StateFinished}

// Collector returns the prometheus.Collector of the manager's jobs. Task,
// vertex and UDF series exist while their job is not terminal.
func (m *Manager) Collector() prometheus.Collector { return metricsCollector{m} }

type metricsCollector struct{ m *Manager }

func (metricsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		descTaskBusy, descTaskIdle, descTaskBackpressured,
		descBytesIn, descBytesOut, descBuffersOut, descInPool, descOutPool, descExclusive, descFloating, descQueued,
		descRecordsIn, descRecordsOut, descUDFErrors, descSkipped, descDeadLettered,
		descInputWatermark, descOutputWatermark, descWatermarkLag,
		descUDFCall, descUDFTraps, descUDFInstances, descUDFMemory, descJobs,
		descCheckpoints, descCheckpointDuration, descCheckpointSize, descCheckpointAlignment, descCheckpointInFlight, descRestarts,
	} {
		ch <- d
	}
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
}

// collect sends the metrics of a job that is not terminal.
func (j *job) collect(ch chan<- prometheus.Metric, tasks []*task) {
	now := monoNanos()
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, t := range tasks {
		f := t.figures(now)
		l := []string{j.id, t.name, strconv.Itoa(t.subtask)}
		counter(descTaskBusy, seconds(f.busy), l...)
		counter(descTaskIdle, seconds(f.idle), l...)
		counter(descTaskBackpressured, seconds(f.backpressured), l...)
		if f.hasInput {
			counter(descBytesIn, float64(f.bytesIn), l...)
			gauge(descInPool, f.in.InPoolUsage, l...)
			gauge(descExclusive, float64(f.in.ExclusiveInUse), l...)
			gauge(descFloating, float64(f.in.FloatingInUse), l...)
			gauge(descQueued, float64(f.in.Queued), l...)
		}
		if f.hasOutput {
			counter(descBytesOut, float64(f.bytesOut), l...)
			counter(descBuffersOut, float64(f.buffersOut), l...)
			gauge(descOutPool, f.outPoolUsage, l...)
		}
		for _, p := range t.stats.pools {
			ul := []string{j.id, p.vertex, strconv.Itoa(t.subtask), p.function}
			count, sum, buckets := p.calls.snapshot()
			ch <- prometheus.MustNewConstHistogram(descUDFCall, count, sum, buckets, ul...)
			for i, k := range trapKinds {
				counter(descUDFTraps, float64(p.traps[i].Load()), append(ul, string(k))...)
			}
			counter(descUDFInstances, float64(p.pool.Instantiations()), ul...)
			gauge(descUDFMemory, float64(p.pool.MemoryBytes()), ul...)
		}
	}
	for _, v := range j.x.Plan.Vertices {
		for i, c := range j.x.Counters[v.ID] {
			l := []string{j.id, v.ID, strconv.Itoa(i)}
			counter(descRecordsIn, float64(c.in.Load()), l...)
			counter(descRecordsOut, float64(c.out.Load()), l...)
			counter(descUDFErrors, float64(c.UDFErrors.Load()), l...)
			counter(descSkipped, float64(c.Skipped.Load()), l...)
			counter(descDeadLettered, float64(c.DeadLettered.Load()), l...)
		}
	}
	info := j.info()
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
			gauge(descOutputWatermark, float64(w)/1e3, j.id, v.ID)
			gauge(descWatermarkLag, float64(nowMS-w)/1e3, j.id, v.ID)
		}
		if in, ok := inputWatermark(v, marks); ok {
			gauge(descInputWatermark, float64(in)/1e3, j.id, v.ID)
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

func seconds(nanos int64) float64 { return float64(nanos) / 1e9 }
