package runtime

import (
	"github.com/prometheus/client_golang/prometheus"

	"wasmstream.io/platform/checkpoint"
)

// Checkpoint and restart metrics, per job.
var (
	// job_id and job_name, not job, which Prometheus sets to the scrape
	// job.
	jobLabels = []string{"job_id", "job_name"}

	descCheckpoints = prometheus.NewDesc("platform_checkpoints_total",
		"Checkpoints that ended, by outcome (completed, failed).", []string{"job_id", "job_name", "outcome"}, nil)
	descCheckpointsInProgress = prometheus.NewDesc("platform_checkpoints_in_progress",
		"Checkpoints and savepoints of the job triggered and not yet ended.", jobLabels, nil)
	descCheckpointDuration = prometheus.NewDesc("platform_checkpoint_last_duration_seconds",
		"Duration of the job's last completed checkpoint, from trigger to stored metadata.", jobLabels, nil)
	descCheckpointSize = prometheus.NewDesc("platform_checkpoint_last_size_bytes",
		"Bytes stored by the job's last completed checkpoint.", jobLabels, nil)
	descCheckpointAlignment = prometheus.NewDesc("platform_checkpoint_last_alignment_seconds",
		"Longest time a task spent aligning barriers in the job's last completed checkpoint.", jobLabels, nil)
	descCheckpointInFlight = prometheus.NewDesc("platform_checkpoint_last_in_flight_bytes",
		"Bytes of in-flight data (unaligned checkpoints) stored by the job's last completed checkpoint.", jobLabels, nil)
	descRestarts = prometheus.NewDesc("platform_job_restarts_total",
		"Restarts of the job after failures.", jobLabels, nil)
)

// collectCheckpoints reports the job's restarts and, when it takes
// checkpoints, their counts and the figures of the last completed one.
func (j *job) collectCheckpoints(ch chan<- prometheus.Metric, info JobInfo) {
	name := info.Name
	ch <- prometheus.MustNewConstMetric(descRestarts, prometheus.CounterValue, float64(info.Restarts), j.id, name)
	if j.x.Checkpoints == nil {
		return
	}
	h := j.x.Checkpoints.History
	completed, failed := h.Counts()
	ch <- prometheus.MustNewConstMetric(descCheckpoints, prometheus.CounterValue, float64(completed), j.id, name, "completed")
	ch <- prometheus.MustNewConstMetric(descCheckpoints, prometheus.CounterValue, float64(failed), j.id, name, "failed")
	all := h.All()
	inProgress := 0
	for _, s := range all {
		if s.Status == checkpoint.StatusInProgress {
			inProgress++
		}
	}
	ch <- prometheus.MustNewConstMetric(descCheckpointsInProgress, prometheus.GaugeValue, float64(inProgress), j.id, name)
	for i := len(all) - 1; i >= 0; i-- {
		s := all[i]
		if s.Kind != checkpoint.KindCheckpoint || s.Status != checkpoint.StatusCompleted {
			continue
		}
		ch <- prometheus.MustNewConstMetric(descCheckpointDuration, prometheus.GaugeValue, s.Duration.Seconds(), j.id, name)
		ch <- prometheus.MustNewConstMetric(descCheckpointSize, prometheus.GaugeValue, float64(s.Size), j.id, name)
		ch <- prometheus.MustNewConstMetric(descCheckpointAlignment, prometheus.GaugeValue, s.Alignment.Seconds(), j.id, name)
		ch <- prometheus.MustNewConstMetric(descCheckpointInFlight, prometheus.GaugeValue, float64(s.InFlight), j.id, name)
		return
	}
}
