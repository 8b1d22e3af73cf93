//go:build !unix

package main

// processCPUNanos is not measured here: the relay benchmark then reports no
// CPU rate.
func processCPUNanos() int64 { return 0 }
