package udf_test

import (
	"errors"
	"fmt"

	udf "wasmstream.io/platform/sdk/go"
)

func init() {
	udf.Join("example_pair", func(key []byte, w udf.Window, left, right udf.Record, emit func(udf.Record)) error {
		emit(udf.Record{Value: fmt.Appendf(nil, "%s+%s", left.Value, right.Value)})
		return nil
	})
	udf.Join("example_strict", func(key []byte, w udf.Window, left, right udf.Record, emit func(udf.Record)) error {
		emit(udf.Record{Value: []byte("discarded")})
		return errors.New("no pairs allowed")
	})
	// A left outer join: every left record, with each right one or null.
	udf.CoGroup("example_left_outer", func(key []byte, w udf.Window, left, right []udf.Record, emit func(udf.Record)) error {
		for _, l := range left {
			if len(right) == 0 {
				emit(udf.Record{Value: fmt.Appendf(nil, "%s+null", l.Value)})
			}
			for _, r := range right {
				emit(udf.Record{Value: fmt.Appendf(nil, "%s+%s", l.Value, r.Value), Timestamp: max(l.Timestamp, r.Timestamp)})
			}
		}
		return nil
	})
}

// A join function sees every pair of the key's window; its results take the
// key and the timestamp window end - 1.
func ExampleJoin() {
	w := udf.Window{Start: 0, End: 1000}
	show(udf.InvokeJoin("example_pair", []byte("k"), w, []udf.Record{rec("a", 1), rec("b", 2)}, []udf.Record{rec("x", 3), rec("y", 4)}))
	// An error fails the whole window, discarding what it emitted.
	show(udf.InvokeJoin("example_strict", []byte("k"), w, []udf.Record{rec("a", 1)}, []udf.Record{rec("x", 3)}))
	// Output:
	// k a+x at 999
	// k a+y at 999
	// k b+x at 999
	// k b+y at 999
	// error for 0: no pairs allowed
}

// In an interval join a left record comes with the right records it
// matched; each result takes the later timestamp of its pair.
func ExampleInvokeIntervalJoin() {
	show(udf.InvokeIntervalJoin("example_pair", []byte("k"), rec("a", 100), []udf.Record{rec("x", 90), rec("y", 150)}))
	// Output:
	// k a+x at 100
	// k a+y at 150
}

// A coGroup function gets both sides of a key's window, even when one is
// empty: here a left outer join.
func ExampleCoGroup() {
	w := udf.Window{Start: 0, End: 1000}
	show(udf.InvokeCoGroup("example_left_outer", []byte("k"), w, []udf.Record{rec("a", 1)}, []udf.Record{rec("x", 3)}))
	show(udf.InvokeCoGroup("example_left_outer", []byte("k"), w, []udf.Record{rec("b", 2)}, nil))
	show(udf.InvokeCoGroup("example_left_outer", []byte("k"), w, nil, []udf.Record{rec("y", 5)}))
	// Output:
	// k a+x at 3
	// k b+null at 999
}
