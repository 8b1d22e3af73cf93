package connector

import (
	"context"
	"io"
	"maps"
	"slices"
	"testing"

	"wasmstream.io/platform/abi"
)

// fetchIndexes fetches up to n records (every remaining one for n < 0) and
// returns their global indexes, in order, and whether the input ended.
func fetchIndexes(t *testing.T, g Source, n int) ([]int64, bool) {
	t.Helper()
	var out []int64
	var b abi.Batch
	for n < 0 || len(out) < n {
		b.Reset()
		want := 7
		if n >= 0 {
			want = min(want, n-len(out))
		}
		err := g.Fetch(context.Background(), &b, want, 0)
		for i := range b.Records {
			out = append(out, (b.Records[i].Timestamp-BaseTimestamp)/tsStep)
		}
		if err == io.EOF {
			return out, true
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return out, false
}

// TestGeneratorResumesFromPositions runs a bounded generator in stages, each
// at its own parallelism, taking every subtask's positions after a few
// records and starting the next stage from them: across the stages every
// index is produced exactly once, and each subtask in global index order.
func TestGeneratorResumesFromPositions(t *testing.T) {
	tests := []struct {
		name   string
		count  int64
		splits int
		// stages are the parallelisms; each subtask of a stage but the
		// last produces take[subtask % len(take)] records.
		stages []int
		take   []int
	}{
		{"same parallelism", 500, 8, []int{2, 2}, []int{30, 45}},
		{"scale up", 500, 8, []int{2, 4}, []int{10, 61}},
		{"scale down", 500, 8, []int{4, 1}, []int{3, 40, 17, 0}},
		{"splits not a multiple of the parallelism", 1000, 128, []int{3, 5, 2}, []int{50, 7, 120, 1, 33}},
		{"splits equal to the parallelism", 300, 0, []int{3, 3, 3}, []int{5, 20}},
		{"a stage ends the input", 40, 4, []int{1, 2}, []int{100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[int64]int{}
			var pos map[string]uint64
			for stage, p := range tc.stages {
				last := stage == len(tc.stages)-1
				next := map[string]uint64{}
				for sub := range p {
					g := newGen(t, GeneratorConfig{Kind: "sequence", Count: tc.count, Subtask: sub, Parallelism: p, Splits: tc.splits, Start: pos})
					n := -1
					if !last {
						n = tc.take[sub%len(tc.take)]
					}
					got, _ := fetchIndexes(t, g, n)
					if !slices.IsSorted(got) {
						t.Fatalf("stage %d subtask %d: indexes out of order: %v", stage, sub, got)
					}
					for _, i := range got {
						seen[i]++
					}
					maps.Copy(next, g.(*generator).Positions())
				}
				pos = next
			}
			for i := range tc.count {
				if seen[i] != 1 {
					t.Fatalf("index %d produced %d times", i, seen[i])
				}
			}
			if len(seen) != int(tc.count) {
				t.Fatalf("%d indexes produced, want %d", len(seen), tc.count)
			}
		})
	}
}

// TestGeneratorResumedRateStartsAtItsPosition: with a rate, a resumed
// generator's clock starts at its position, so its next records are due at
// once instead of after the time the earlier records took.
func TestGeneratorResumedRateStartsAtItsPosition(t *testing.T) {
	g := newGen(t, GeneratorConfig{Kind: "sequence", Rate: 10, Parallelism: 1, Start: map[string]uint64{"0": 100_000}})
	got, _ := fetchIndexes(t, g, 1)
	if !slices.Equal(got, []int64{100_000}) {
		t.Fatalf("first indexes after the resume %v, want [100000]", got)
	}
}

func TestGeneratorPositionErrors(t *testing.T) {
	tests := []struct {
		cfg  GeneratorConfig
		want string
	}{
		{GeneratorConfig{Kind: "sequence", Parallelism: 4, Splits: 2}, "connector: generator sequence: 2 splits: want at least the parallelism, 4"},
		{GeneratorConfig{Kind: "sequence", Parallelism: 2, Splits: 8, Start: map[string]uint64{"8": 16}},
			`connector: generator sequence: position of split "8": want a split number below 8 (did the job's max_parallelism change?)`},
		{GeneratorConfig{Kind: "sequence", Parallelism: 2, Splits: 8, Start: map[string]uint64{"x": 1}},
			`connector: generator sequence: position of split "x": want a split number below 8 (did the job's max_parallelism change?)`},
		{GeneratorConfig{Kind: "sequence", Parallelism: 2, Splits: 8, Start: map[string]uint64{"3": 12}},
			"connector: generator sequence: position of split 3: index 12 is not one of the split's"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			_, err := NewGenerator(tc.cfg)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v, want %s", err, tc.want)
			}
		})
	}
}

// TestGeneratorPositionsNameEverySplit: a fresh subtask reports each of its
// splits at its first index.
func TestGeneratorPositionsNameEverySplit(t *testing.T) {
	g := newGen(t, GeneratorConfig{Kind: "sequence", Subtask: 1, Parallelism: 3, Splits: 8})
	want := map[string]uint64{"1": 1, "4": 4, "7": 7}
	if got := g.(*generator).Positions(); !maps.Equal(got, want) {
		t.Fatalf("positions %v, want %v", got, want)
	}
	if _, ended := fetchIndexes(t, g, 4); ended {
		t.Fatal("unbounded generator ended")
	}
	want = map[string]uint64{"1": 17, "4": 12, "7": 15}
	if got := g.(*generator).Positions(); !maps.Equal(got, want) {
		t.Fatalf("after 4 records: positions %v, want %v", got, want)
	}
}
