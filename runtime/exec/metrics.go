package exec

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// The metrics of a running job's tasks and vertices. Task metrics are per
// task (chain) subtask, labelled with the chain head's vertex id, as Flink's
// network metrics are per task; vertex metrics are per vertex subtask.
// Nothing is updated per record: tasks keep atomics and the collector reads
// them at scrape time.
var (
	// job_id and job_name, not job, which Prometheus sets to the scrape
	// job.
	taskLabels = []string{"job_id", "job_name", "vertex", "subtask"}
	udfLabels  = []string{"job_id", "job_name", "vertex", "subtask", "function"}

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
	descSourceGaps = prometheus.NewDesc("platform_source_gaps_total",
		"Sequence gaps a JetStream source subtask went on past (on_gap: skip): messages it had not read were removed from its stream.", taskLabels, nil)
	descDeadLettered = prometheus.NewDesc("platform_vertex_records_dead_lettered_total",
		"Failed records published to the dead-letter subject.", taskLabels, nil)

	descLate = prometheus.NewDesc("platform_vertex_late_records_total",
		"Records a window or join vertex received too late for every window or interval they belong to (dropped, or sent to late_output).", taskLabels, nil)
	descSourceLag = prometheus.NewDesc("platform_source_lag_messages",
		"Messages of the source subtask's JetStream subjects (or KV bucket keys) not yet delivered, as JetStream's pending count reports them; "+
			"for a core NATS source, the messages received and not yet taken.", taskLabels, nil)
	descSourceDropped = prometheus.NewDesc("platform_source_dropped_total",
		"Messages the NATS client dropped for a core NATS source subtask that fell too far behind (at most once: they are lost).", taskLabels, nil)
	descStateBytes = prometheus.NewDesc("platform_state_bytes",
		"Bytes the operator subtask's keyed state holds reserved from the job's keyed state budget (0 for the pebble backend).", taskLabels, nil)

	descUDFCall = prometheus.NewDesc("platform_udf_call_duration_seconds",
		"Duration of one call into a Wasm function (one batch).", udfLabels, nil)
	descUDFTraps = prometheus.NewDesc("platform_udf_traps_total",
		"Calls into a Wasm function that failed inside the guest, by kind (trap, deadline, memory_limit, exit, bad_output).",
		append(udfLabels, "kind"), nil)
	descUDFInstances = prometheus.NewDesc("platform_udf_instances_created_total",
		"Wasm instances the task created for the function.", udfLabels, nil)
	descUDFMemory = prometheus.NewDesc("platform_udf_memory_bytes",
		"Linear memory of the function's live Wasm instance.", udfLabels, nil)
)

// DescribeMetrics sends the descriptors of CollectMetrics.
func DescribeMetrics(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		descTaskBusy, descTaskIdle, descTaskBackpressured,
		descBytesIn, descBytesOut, descBuffersOut, descInPool, descOutPool, descExclusive, descFloating, descQueued,
		descRecordsIn, descRecordsOut, descUDFErrors, descSkipped, descDeadLettered,
		descLate, descSourceLag, descSourceDropped, descSourceGaps, descStateBytes, descUDFCall, descUDFTraps, descUDFInstances, descUDFMemory,
		descCanaryRecordsIn, descCanaryRecordsOut, descCanaryUDFErrors, descCanaryCall,
	} {
		ch <- d
	}
}

// CollectMetrics sends the metrics of job j's tasks (the ones running now)
// and vertices.
func CollectMetrics(ch chan<- prometheus.Metric, j *Job, tasks []*Task) {
	now := MonoNanos()
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, t := range tasks {
		f := t.figures(now)
		l := []string{j.ID, j.Plan.Job.Name, t.name, strconv.Itoa(t.subtask)}
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
		if src, ok := t.source.(interface{ Lag() int64 }); ok {
			gauge(descSourceLag, float64(src.Lag()), l...)
		}
		if src, ok := t.source.(interface{ Dropped() int64 }); ok {
			counter(descSourceDropped, float64(src.Dropped()), l...)
		}
		for _, p := range t.stats.pools {
			ul := []string{j.ID, j.Plan.Job.Name, p.vertex, strconv.Itoa(t.subtask), p.function}
			count, sum, buckets := p.calls.snapshot()
			ch <- prometheus.MustNewConstHistogram(descUDFCall, count, sum, buckets, ul...)
			for i, k := range TrapKinds {
				counter(descUDFTraps, float64(p.traps[i].Load()), append(ul, string(k))...)
			}
			counter(descUDFInstances, float64(p.pool.Instantiations()), ul...)
			gauge(descUDFMemory, float64(p.pool.MemoryBytes()), ul...)
		}
	}
	for _, v := range j.Plan.Vertices {
		for i, c := range j.Counters[v.ID] {
			l := []string{j.ID, j.Plan.Job.Name, v.ID, strconv.Itoa(i)}
			counter(descRecordsIn, float64(c.In.Load()), l...)
			counter(descRecordsOut, float64(c.Out.Load()), l...)
			counter(descUDFErrors, float64(c.UDFErrors.Load()), l...)
			counter(descSkipped, float64(c.Skipped.Load()), l...)
			counter(descDeadLettered, float64(c.DeadLettered.Load()), l...)
			if v.Window != nil || v.Join != nil {
				counter(descLate, float64(c.Late.Load()), l...)
			}
			if v.Source != nil && v.Source.JetStream != nil {
				counter(descSourceGaps, float64(c.Gaps.Load()), l...)
			}
			if k := c.State.Load(); k != nil {
				gauge(descStateBytes, float64(k.BudgetBytes()), l...)
			}
		}
	}
	collectCanary(ch, j, tasks) // canary.go
}

func seconds(nanos int64) float64 { return float64(nanos) / 1e9 }
