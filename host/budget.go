package host

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"sync/atomic"
)

// memoryBudget is the worker-wide bound on guest linear memory: every
// instance reserves its memory here before it has it (linearmem.go), and
// gives it back when it is closed.
type memoryBudget struct {
	limit int64
	used  atomic.Int64
}

// tryReserve takes n bytes from the budget, or reports that they would
// exceed it and takes nothing.
func (b *memoryBudget) tryReserve(n int64) bool {
	for {
		used := b.used.Load()
		if used+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

// release gives n reserved bytes back.
func (b *memoryBudget) release(n int64) { b.used.Add(-n) }

// fallbackMemory is the machine's memory assumed where it cannot be read.
const fallbackMemory = 8 << 30

// DefaultMemoryBudget is the guest memory budget of a Host whose Config sets
// none: half of the memory available to the process, which is the
// machine's (MemTotal in /proc/meminfo) or its cgroup's limit
// (memory.max in cgroup v2, memory.limit_in_bytes in v1) when that is lower.
// Where neither can be read it is half of 8 GiB.
func DefaultMemoryBudget() int64 {
	total := machineMemory()
	if total <= 0 {
		total = fallbackMemory
	}
	if c := cgroupMemoryLimit(); c > 0 && c < total {
		total = c
	}
	return total / 2
}

// machineMemory reads MemTotal from /proc/meminfo, in bytes; 0 if it cannot.
func machineMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := bytes.CutPrefix(s.Bytes(), []byte("MemTotal:")); ok {
			return parseKB(rest)
		}
	}
	return 0
}

// parseKB reads a /proc/meminfo value such as "  24683584 kB" in bytes; 0
// if it cannot.
func parseKB(field []byte) int64 {
	num, unit, _ := bytes.Cut(bytes.TrimSpace(field), []byte(" "))
	n, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	if string(bytes.TrimSpace(unit)) == "kB" {
		return n << 10
	}
	return n
}

// cgroupMemoryLimit reads the memory limit of the process's cgroup (the
// files as mounted in the process's own namespace), in bytes; 0 without
// one. "max" (v2) and the near-2^63 value of v1 mean no limit.
func cgroupMemoryLimit() int64 {
	for _, path := range [...]string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(data)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<62 {
			return 0
		}
		return n
	}
	return 0
}
