package udf_test

import (
	"bytes"
	"errors"
	"fmt"

	udf "wasmstream.io/platform/sdk/go"
)

func init() {
	// user_key keys "user:rest" records by the user before the colon.
	udf.Key("user_key", func(r udf.Record) ([]byte, error) {
		user, _, ok := bytes.Cut(r.Value, []byte(":"))
		if !ok {
			return nil, errors.New("no user")
		}
		return user, nil
	})
}

func ExampleKey() {
	out, err := udf.Invoke("user_key", []udf.Record{
		{Value: []byte("ann:click")},
		{Value: []byte("garbage")},
	})
	if err != nil {
		panic(err)
	}
	for _, o := range out {
		if o.Err != "" {
			fmt.Printf("input %d failed: %s\n", o.Index, o.Err)
			continue
		}
		fmt.Printf("input %d keyed by %s\n", o.Index, o.Record.Key)
	}
	// Output:
	// input 0 keyed by ann
	// input 1 failed: no user
}
