package state

import (
	"encoding/binary"
	"fmt"
	"testing"
)

func TestKeyGroupRangesPartition(t *testing.T) {
	for _, maxP := range []int{1, 2, 3, 7, 10, 128, 129, 1000, 32768} {
		for _, p := range []int{1, 2, 3, 4, 5, 7, 8, 13, 64, 100, 127, 128} {
			if p > maxP {
				continue
			}
			t.Run(fmt.Sprintf("max%d/p%d", maxP, p), func(t *testing.T) {
				next := 0
				for i := 0; i < p; i++ {
					start, end := KeyGroupRange(maxP, p, i)
					if start != next {
						t.Fatalf("subtask %d starts at %d, want %d", i, start, next)
					}
					if end < start {
						t.Fatalf("subtask %d owns [%d, %d], want a non-empty range", i, start, end)
					}
					for _, kg := range []int{start, (start + end) / 2, end} {
						if got := OperatorIndex(kg, maxP, p); got != i {
							t.Fatalf("OperatorIndex(%d) = %d, want %d", kg, got, i)
						}
					}
					next = end + 1
				}
				if next != maxP {
					t.Fatalf("ranges end at %d, want %d", next-1, maxP-1)
				}
			})
		}
	}
}

func TestOperatorIndexInRange(t *testing.T) {
	for _, tc := range []struct{ maxP, p int }{{128, 1}, {128, 3}, {128, 128}, {10, 4}, {1000, 7}} {
		for kg := 0; kg < tc.maxP; kg++ {
			i := OperatorIndex(kg, tc.maxP, tc.p)
			start, end := KeyGroupRange(tc.maxP, tc.p, i)
			if kg < start || kg > end {
				t.Fatalf("max %d p %d: key group %d -> subtask %d owning [%d, %d]", tc.maxP, tc.p, kg, i, start, end)
			}
		}
	}
}

func TestKeyGroupRangeFlink(t *testing.T) {
	for _, tc := range []struct {
		maxP, p, i, start, end int
	}{
		{128, 1, 0, 0, 127},
		{128, 3, 0, 0, 42},
		{128, 3, 1, 43, 85},
		{128, 3, 2, 86, 127},
		{10, 4, 0, 0, 2},
		{10, 4, 1, 3, 4},
		{10, 4, 2, 5, 7},
		{10, 4, 3, 8, 9},
	} {
		start, end := KeyGroupRange(tc.maxP, tc.p, tc.i)
		if start != tc.start || end != tc.end {
			t.Errorf("KeyGroupRange(%d, %d, %d) = [%d, %d], want [%d, %d]", tc.maxP, tc.p, tc.i, start, end, tc.start, tc.end)
		}
	}
}

// The key group of a key is part of every snapshot: it must never change.
func TestKeyGroupStable(t *testing.T) {
	for _, tc := range []struct {
		key  string
		maxP int
		want int
	}{
		{"", 128, 38},
		{"a", 128, 91},
		{"user-42", 128, 13},
		{"user-42", 32768, 7821},
		{"user-42", 1, 0},
	} {
		if got := KeyGroup([]byte(tc.key), tc.maxP); got != tc.want {
			t.Errorf("KeyGroup(%q, %d) = %d, want %d", tc.key, tc.maxP, got, tc.want)
		}
	}
}

func TestKeyGroupUniform(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  func(i int, b []byte) []byte
	}{
		{"sequential uint64", func(i int, b []byte) []byte { return binary.BigEndian.AppendUint64(b, uint64(i)) }},
		{"decimal strings", func(i int, b []byte) []byte { return fmt.Appendf(b, "user-%d", i) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const maxP, keys = 128, 128 * 1000
			var counts [maxP]int
			var buf []byte
			for i := 0; i < keys; i++ {
				buf = tc.key(i, buf[:0])
				counts[KeyGroup(buf, maxP)]++
			}
			// 1000 expected per group; a binomial deviation of 15% is
			// about 5 standard deviations.
			for kg, n := range counts {
				if n < 850 || n > 1150 {
					t.Errorf("key group %d holds %d of %d keys, want 850..1150", kg, n, keys)
				}
			}
		})
	}
}

func TestKeyGroupNoAllocs(t *testing.T) {
	key := []byte("some-key-bytes")
	allocs := testing.AllocsPerRun(100, func() {
		kg := KeyGroup(key, 128)
		_ = OperatorIndex(kg, 128, 4)
		_, _ = KeyGroupRange(128, 4, 1)
	})
	if allocs != 0 {
		t.Fatalf("allocs per run = %v, want 0", allocs)
	}
}

func BenchmarkKeyGroup(b *testing.B) {
	key := []byte("user-0000042")
	for b.Loop() {
		KeyGroup(key, 128)
	}
}
