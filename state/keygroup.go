package state

// Keys are assigned to key groups, the unit in which keyed state is
// partitioned, snapshotted and redistributed on rescale. A job has
// maxParallelism key groups; subtask i of an operator with parallelism p owns
// a contiguous range of them, as in Flink.

const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// KeyGroup maps key to one of maxParallelism key groups: FNV-1a over the
// bytes followed by the murmur3 64-bit finaliser, modulo maxParallelism. The
// mapping is stable across processes and versions; state snapshots depend on
// it. maxParallelism must be positive.
func KeyGroup(key []byte, maxParallelism int) int {
	h := uint64(fnvOffset64)
	for _, b := range key {
		h ^= uint64(b)
		h *= fnvPrime64
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return int(h % uint64(maxParallelism))
}

// OperatorIndex is the subtask of an operator with parallelism subtasks that
// owns keyGroup: keyGroup * parallelism / maxParallelism.
func OperatorIndex(keyGroup, maxParallelism, parallelism int) int {
	return keyGroup * parallelism / maxParallelism
}

// KeyGroupRange is the inclusive range [start, end] of key groups that
// subtask owns when maxParallelism key groups are spread over parallelism
// subtasks. The ranges of subtasks 0..parallelism-1 partition
// [0, maxParallelism) and agree with OperatorIndex. A subtask owns no key
// group (end < start) only when parallelism > maxParallelism.
func KeyGroupRange(maxParallelism, parallelism, subtask int) (start, end int) {
	start = (subtask*maxParallelism + parallelism - 1) / parallelism
	end = ((subtask+1)*maxParallelism - 1) / parallelism
	return start, end
}
