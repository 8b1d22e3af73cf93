package state

import "fmt"

// Range is the inclusive range [First, Last] of key groups a subtask owns.
type Range struct {
	First int `json:"first"`
	Last  int `json:"last"`
}

// RangeOf is the range subtask owns when maxParallelism key groups are spread
// over parallelism subtasks (see KeyGroupRange).
func RangeOf(maxParallelism, parallelism, subtask int) Range {
	first, last := KeyGroupRange(maxParallelism, parallelism, subtask)
	return Range{First: first, Last: last}
}

// Contains reports whether key group kg is in the range.
func (r Range) Contains(kg int) bool { return kg >= r.First && kg <= r.Last }

// Len is the number of key groups in the range.
func (r Range) Len() int { return max(0, r.Last-r.First+1) }

// Overlaps reports whether the ranges share a key group.
func (r Range) Overlaps(o Range) bool {
	return r.Len() > 0 && o.Len() > 0 && r.First <= o.Last && o.First <= r.Last
}

func (r Range) String() string { return fmt.Sprintf("[%d, %d]", r.First, r.Last) }
