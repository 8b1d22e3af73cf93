package udf_test

import (
	udf "wasmstream.io/platform/sdk/go"
)

func init() {
	udf.Filter("drop_empty", func(r udf.Record) (bool, error) {
		if len(r.Value) == 0 {
			udf.Log(udf.LevelWarn, "dropping a record with an empty value")
			return false, nil
		}
		return true, nil
	})
}

// Log lines reach the platform's logs at their level; in a native test they
// go to slog's default logger.
func ExampleLog() {
	if _, err := udf.Invoke("drop_empty", []udf.Record{{}}); err != nil {
		panic(err)
	}
}
