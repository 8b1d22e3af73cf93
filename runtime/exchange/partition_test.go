package exchange

import (
	"fmt"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/state"
)

func TestForward(t *testing.T) {
	if got := Forward(3).Channel(&abi.Record{}); got != 3 {
		t.Fatalf("Forward(3) = %d, want 3", got)
	}
}

func TestRebalance(t *testing.T) {
	for _, tc := range []struct {
		channels, start int
		want            []int
	}{
		{3, 0, []int{0, 1, 2, 0, 1, 2, 0}},
		{3, 1, []int{1, 2, 0, 1, 2, 0, 1}},
		{3, 4, []int{1, 2, 0, 1, 2, 0, 1}},
		{1, 5, []int{0, 0, 0}},
	} {
		r := NewRebalance(tc.channels, tc.start)
		var got []int
		for range tc.want {
			got = append(got, r.Channel(&abi.Record{}))
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("NewRebalance(%d, %d): %v, want %v", tc.channels, tc.start, got, tc.want)
		}
	}
}

func TestKeyGroupsPartitioner(t *testing.T) {
	const maxP, channels, keys = 128, 4, 4000
	p := NewKeyGroups(maxP, channels)
	counts := make([]int, channels)
	for i := range keys {
		key := fmt.Appendf(nil, "user-%d", i)
		got := p.Channel(&abi.Record{Key: key})
		kg := state.KeyGroup(key, maxP)
		start, end := state.KeyGroupRange(maxP, channels, got)
		if kg < start || kg > end {
			t.Fatalf("key %s in key group %d went to channel %d owning [%d, %d]", key, kg, got, start, end)
		}
		counts[got]++
	}
	for c, n := range counts {
		if n < keys/channels*8/10 || n > keys/channels*12/10 {
			t.Errorf("channel %d got %d of %d keys, want within 20%% of %d", c, n, keys, keys/channels)
		}
	}
}
