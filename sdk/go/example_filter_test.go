package udf_test

import (
	"bytes"
	"fmt"

	udf "wasmstream.io/platform/sdk/go"
)

func init() {
	udf.Filter("errors_only", func(r udf.Record) (bool, error) {
		return bytes.Contains(r.Value, []byte("ERROR")), nil
	})
}

func ExampleFilter() {
	out, err := udf.Invoke("errors_only", []udf.Record{
		{Value: []byte("INFO started")},
		{Value: []byte("ERROR disk full")},
		{Value: []byte("WARN slow")},
	})
	if err != nil {
		panic(err)
	}
	for _, o := range out {
		fmt.Printf("kept input %d: %s\n", o.Index, o.Record.Value)
	}
	// Output:
	// kept input 1: ERROR disk full
}
