package udf_test

import (
	"bytes"
	"fmt"

	udf "wasmstream.io/platform/sdk/go"
)

func init() {
	udf.Map("shout", func(r udf.Record) (udf.Record, error) {
		r.Value = append(bytes.ToUpper(r.Value), '!')
		return r, nil
	})
}

func ExampleMap() {
	out, err := udf.Invoke("shout", []udf.Record{
		{Key: []byte("greeting"), Value: []byte("hello"), Timestamp: 1000},
	})
	if err != nil {
		panic(err)
	}
	for _, o := range out {
		fmt.Printf("%s=%s at %d\n", o.Record.Key, o.Record.Value, o.Record.Timestamp)
	}
	// Output:
	// greeting=HELLO! at 1000
}
