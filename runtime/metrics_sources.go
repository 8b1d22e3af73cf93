package runtime

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

var descSourceGaps = prometheus.NewDesc("platform_source_gaps_total",
	"Sequence gaps a JetStream source subtask went on past (on_gap: skip): messages it had not read were removed from its stream.",
	[]string{"job", "vertex", "subtask"}, nil)

// collectSourceGaps reports the gaps of every JetStream source subtask.
func (j *job) collectSourceGaps(ch chan<- prometheus.Metric) {
	for _, v := range j.x.Plan.Vertices {
		if v.Source == nil || v.Source.JetStream == nil {
			continue
		}
		for i, c := range j.x.Counters[v.ID] {
			ch <- prometheus.MustNewConstMetric(descSourceGaps, prometheus.CounterValue, float64(c.Gaps.Load()), j.id, v.ID, strconv.Itoa(i))
		}
	}
}
