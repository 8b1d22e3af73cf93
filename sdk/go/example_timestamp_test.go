package udf_test

import (
	"encoding/binary"
	"errors"
	"fmt"

	udf "wasmstream.io/platform/sdk/go"
)

func init() {
	// event_time reads the event time from the value's first 8 bytes,
	// big-endian milliseconds.
	udf.Timestamp("event_time", func(r udf.Record) (int64, error) {
		if len(r.Value) < 8 {
			return 0, errors.New("value shorter than 8 bytes")
		}
		return int64(binary.BigEndian.Uint64(r.Value)), nil
	})
}

func ExampleTimestamp() {
	out, err := udf.Invoke("event_time", []udf.Record{
		{Value: binary.BigEndian.AppendUint64(nil, 1700000000000), Timestamp: 5},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(out[0].Record.Timestamp)
	// Output:
	// 1700000000000
}
