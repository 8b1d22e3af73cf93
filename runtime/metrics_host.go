package runtime

import (
	"github.com/prometheus/client_golang/prometheus"

	"wasmstream.io/platform/host"
)

// The Wasm host's metrics, one series each per process: what its guests'
// linear memories hold of host.memory_budget, and the budget.
var (
	descHostMemoryReserved = prometheus.NewDesc("platform_host_memory_reserved_bytes",
		"Linear memory the process's Wasm instances, idle ones included, have reserved from host.memory_budget.", nil, nil)
	descHostMemoryBudget = prometheus.NewDesc("platform_host_memory_budget_bytes",
		"The process's host.memory_budget: the most linear memory its Wasm instances may hold together.", nil, nil)
)

// collectHost reports h's guest memory against its budget; nothing
// without a Host.
func collectHost(ch chan<- prometheus.Metric, h *host.Host) {
	if h == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(descHostMemoryReserved, prometheus.GaugeValue, float64(h.MemoryReserved()))
	ch <- prometheus.MustNewConstMetric(descHostMemoryBudget, prometheus.GaugeValue, float64(h.MemoryBudget()))
}
