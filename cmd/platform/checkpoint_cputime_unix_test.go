//go:build unix

package main

import "syscall"

// processCPUNanos is the CPU time the process (platform and embedded server)
// has used, user and system: the relay benchmark also reports records per
// CPU second, which a busy shared machine disturbs less than records per
// wall second.
func processCPUNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
