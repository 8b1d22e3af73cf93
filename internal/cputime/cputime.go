// Package cputime reads the CPU time the process has used, and its peak
// resident memory. Benchmarks report work per CPU second beside work per
// wall second: a busy shared machine disturbs the first much less than the
// second.
package cputime

// Process is the CPU time the process has used so far, user and system, in
// nanoseconds; 0 where it is not measured.
func Process() int64 { return process() }

// PeakRSS is the largest resident set size the process has had so far, in
// bytes; 0 where it is not measured.
func PeakRSS() int64 { return peakRSS() }
