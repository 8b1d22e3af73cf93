package udf

import (
	"fmt"
	"testing"
)

// TestCallAllocationFree checks that once a caller has reached its working
// size, running a function that allocates nothing itself allocates nothing.
func TestCallAllocationFree(t *testing.T) {
	var recs []Record
	for i := range 64 {
		recs = append(recs, rec(fmt.Sprint("key", i), fmt.Sprint("value,", i), int64(i), "h", "v", "g", "w"))
	}
	recs = append(recs, rec("", "bad", 0))
	frame := frameOf(recs...)
	for _, name := range []string{"test_upper", "test_fresh", "test_fail", "test_filter", "test_fields", "test_key", "test_len_ts"} {
		t.Run(name, func(t *testing.T) {
			c := newCaller(&functions)
			fn := uint32(functions.lookup(name))
			in := append([]byte(nil), frame...)
			c.call(fn, in)
			allocs := testing.AllocsPerRun(100, func() {
				copy(in, frame)
				c.call(fn, in)
			})
			if allocs != 0 {
				t.Fatalf("%v allocations per call", allocs)
			}
		})
	}
}
