package udf_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
)

// meanAcc is the accumulator of example_mean: a count and a sum.
type meanAcc struct {
	Count int64
	Sum   float64
}

func init() {
	udf.AggregateOf("example_mean", udf.BinaryCodec[meanAcc](), udf.TypedAggregate[meanAcc]{
		Create: func(acc *meanAcc) { *acc = meanAcc{} },
		Add: func(acc *meanAcc, r udf.Record) error {
			v, err := strconv.ParseFloat(string(r.Value), 64)
			acc.Count++
			acc.Sum += v
			return err
		},
		Merge: func(acc, other *meanAcc) error {
			acc.Count += other.Count
			acc.Sum += other.Sum
			return nil
		},
		Result: func(key []byte, w udf.Window, acc *meanAcc) ([]byte, error) {
			return strconv.AppendFloat(nil, acc.Sum/float64(acc.Count), 'f', -1, 64), nil
		},
	})
	udf.Aggregate("example_longest", udf.AggregateFuncs{
		Create: func() []byte { return nil },
		Add: func(acc []byte, r udf.Record) ([]byte, error) {
			if len(r.Value) > len(acc) {
				return append(acc[:0], r.Value...), nil
			}
			return acc, nil
		},
		Merge: func(a, b []byte) ([]byte, error) {
			if len(b) > len(a) {
				return b, nil
			}
			return a, nil
		},
		Result: func(key []byte, w udf.Window, acc []byte) ([]byte, error) { return acc, nil },
	})
	udf.Reduce("example_concat", func(acc, value []byte) ([]byte, error) {
		return append(append(acc, '+'), value...), nil
	})
	udf.ProcessWindow("example_span", func(key []byte, w udf.Window, recs []udf.Record, emit func(udf.Record)) error {
		first, last := recs[0].Timestamp, recs[0].Timestamp
		for _, r := range recs {
			first, last = min(first, r.Timestamp), max(last, r.Timestamp)
		}
		emit(udf.Record{Value: fmt.Appendf(nil, "%d records over %d ms", len(recs), last-first)})
		return nil
	})
	udf.SessionGap("example_gap", func(r udf.Record) (int64, error) {
		if bytes.HasPrefix(r.Value, []byte("slow")) {
			return 60_000, nil
		}
		return 5_000, nil
	})
	udf.Watermark("example_marker", func(r udf.Record) (int64, bool, error) {
		if !bytes.Equal(r.Value, []byte("tick")) {
			return 0, false, nil
		}
		return r.Timestamp, true, nil
	})
}

func show(outs []udf.Output, err error) {
	if err != nil {
		panic(err)
	}
	for _, o := range outs {
		if o.Err != "" {
			fmt.Printf("error for %d: %s\n", o.Index, o.Err)
			continue
		}
		fmt.Printf("%s %s at %d\n", o.Record.Key, o.Record.Value, o.Record.Timestamp)
	}
}

func rec(value string, ts int64) udf.Record { return udf.Record{Value: []byte(value), Timestamp: ts} }

// An incremental aggregate over a Go struct: each part is added into its own
// accumulator, and the accumulators are merged, as sliding windows and
// sessions do.
func ExampleAggregateOf() {
	w := udf.Window{Start: 0, End: 1000}
	show(udf.InvokeAggregate("example_mean", []byte("k"), w, []udf.Record{rec("1", 10), rec("2", 20)}, []udf.Record{rec("6", 900)}))
	// The platform stores the accumulator's bytes.
	b, _ := binary.Append(nil, binary.LittleEndian, &meanAcc{Count: 2, Sum: 3})
	fmt.Println(len(b), "bytes")
	// Output:
	// k 3 at 999
	// 16 bytes
}

func ExampleAggregate() {
	show(udf.InvokeAggregate("example_longest", []byte("k"), udf.Window{Start: 0, End: 10}, []udf.Record{rec("ab", 1), rec("abcd", 2)}, []udf.Record{rec("abc", 3)}))
	// Output:
	// k abcd at 9
}

func ExampleReduce() {
	show(udf.InvokeAggregate("example_concat", []byte("k"), udf.Window{Start: 0, End: 10}, []udf.Record{rec("a", 1), rec("b", 2)}, []udf.Record{rec("c", 3)}))
	// Output:
	// k a+b+c at 9
}

func ExampleProcessWindow() {
	show(udf.InvokeProcessWindow("example_span", []byte("k"), udf.Window{Start: 0, End: 100}, []udf.Record{rec("x", 10), rec("y", 70), rec("z", 40)}))
	// Output:
	// k 3 records over 60 ms at 99
}

func ExampleSessionGap() {
	show(udf.InvokeSessionGap("example_gap", []udf.Record{rec("slow walk", 1), rec("run", 2)}))
	// Output:
	//  slow walk at 60000
	//  run at 5000
}

func ExampleWatermark() {
	outs, err := udf.InvokeWatermark("example_marker", []udf.Record{rec("a", 5), rec("tick", 7), rec("b", 6)})
	if err != nil {
		panic(err)
	}
	for _, o := range outs {
		fmt.Printf("watermark %d after record %d\n", o.Record.Timestamp, o.Index)
	}
	// Output:
	// watermark 7 after record 1
}
