package udf_test

import (
	"errors"
	"fmt"
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
)

func init() {
	udf.Map("double", func(r udf.Record) (udf.Record, error) {
		n, err := strconv.Atoi(string(r.Value))
		if err != nil {
			return r, errors.New("not a number")
		}
		if n < 0 {
			panic("negative")
		}
		r.Value = strconv.AppendInt(nil, int64(2*n), 10)
		return r, nil
	})
}

// Errors and panics become per-record error outputs; the other records of the
// batch are unaffected.
func ExampleInvoke() {
	out, err := udf.Invoke("double", []udf.Record{
		{Value: []byte("21")},
		{Value: []byte("x")},
		{Value: []byte("-1")},
	})
	if err != nil {
		panic(err)
	}
	for _, o := range out {
		fmt.Printf("%d: %q %q\n", o.Index, o.Record.Value, o.Err)
	}
	// Output:
	// 0: "42" ""
	// 1: "" "not a number"
	// 2: "" "panic: negative"
}
