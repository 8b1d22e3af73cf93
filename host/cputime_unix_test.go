//go:build unix

package host

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used, in user and system
// mode. On shared machines it measures work where wall time would measure
// the neighbours too.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
