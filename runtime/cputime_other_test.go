//go:build !unix

package runtime

// processCPUNanos is not measured here: benchmarks then report no CPU rate.
func processCPUNanos() int64 { return 0 }
