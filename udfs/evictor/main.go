// Command evictor is a UDF module of custom window evictors (Flink's
// Evictor): near_newest keeps the records whose integer field n is within
// 10 of the newest record's, top2 the two records of greatest n. Its
// README says more; build it with make.
package main

import (
	"fmt"

	udf "wasmstream.io/platform/sdk/go"
	"wasmstream.io/platform/sdk/go/json"
)

// near is how far from the newest record's n a record's may be.
const near = 10

func init() {
	udf.Evictor("near_newest", nearNewest)
	udf.Evictor("top2", top2)
}

// numbers reads every record's integer field n into ns; a record without
// one fails the window. A record whose value is "crash" panics, for the
// tests of a failing evictor.
func numbers(e *udf.Eviction, ns []int64) ([]int64, error) {
	for i, r := range e.Records {
		if string(r.Value) == "crash" {
			panic("crash")
		}
		n, ok := json.GetInt(r.Value, "n")
		if !ok {
			return nil, fmt.Errorf("record %d: no integer n", i)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// nearNewest evicts the records whose n is more than near from the newest
// record's (the one of the greatest timestamp, the last of equal ones).
func nearNewest(e *udf.Eviction) error {
	ns, err := numbers(e, nil)
	if err != nil || len(ns) == 0 {
		return err
	}
	newest := 0
	for i, r := range e.Records {
		if r.Timestamp >= e.Records[newest].Timestamp {
			newest = i
		}
	}
	top := ns[newest]
	for i, n := range ns {
		// The distance in uint64 is exact for any two int64s.
		if n > top && uint64(n)-uint64(top) > near || n < top && uint64(top)-uint64(n) > near {
			e.Evict(i)
		}
	}
	return nil
}

// top2 keeps the two records of greatest n, the earlier of equal ones.
func top2(e *udf.Eviction) error {
	ns, err := numbers(e, nil)
	if err != nil {
		return err
	}
	first, second := -1, -1
	for i, n := range ns {
		switch {
		case first < 0 || n > ns[first]:
			first, second = i, first
		case second < 0 || n > ns[second]:
			second = i
		}
	}
	for i := range ns {
		if i != first && i != second {
			e.Evict(i)
		}
	}
	return nil
}

func main() {}
