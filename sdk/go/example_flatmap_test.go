package udf_test

import (
	"bytes"
	"fmt"

	udf "wasmstream.io/platform/sdk/go"
)

func init() {
	udf.FlatMap("lines", func(r udf.Record, emit func(udf.Record)) error {
		for line := range bytes.Lines(r.Value) {
			r.Value = bytes.TrimSuffix(line, []byte("\n"))
			emit(r)
		}
		return nil
	})
}

func ExampleFlatMap() {
	out, err := udf.Invoke("lines", []udf.Record{
		{Key: []byte("doc1"), Value: []byte("first\nsecond\n")},
		{Key: []byte("doc2"), Value: []byte("")},
		{Key: []byte("doc3"), Value: []byte("third")},
	})
	if err != nil {
		panic(err)
	}
	for _, o := range out {
		fmt.Printf("input %d: %s %s\n", o.Index, o.Record.Key, o.Record.Value)
	}
	// Output:
	// input 0: doc1 first
	// input 0: doc1 second
	// input 2: doc3 third
}
