// Command kinds is a UDF module with a function of every implemented kind and
// functions that fail per record, for the platform's tests and as a reference
// of the Go SDK. Its README says what each function does. Build it with make.
package main

import (
	"bytes"
	"errors"
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
)

func init() {
	udf.Map("swap", swap)
	udf.Map("delay", delay)
	udf.Map("annotate", annotate)
	udf.Map("crash", crash)
	udf.Map("log", logValue)
	udf.Filter("nonempty", nonempty)
	udf.FlatMap("fields", fields)
	udf.Key("by_value", byValue)
	udf.Timestamp("parse_time", parseTime)
}

// swap exchanges the key and the value.
func swap(r udf.Record) (udf.Record, error) {
	r.Key, r.Value = r.Value, r.Key
	return r, nil
}

// delay moves the timestamp one second later.
func delay(r udf.Record) (udf.Record, error) {
	r.Timestamp += 1000
	return r, nil
}

// annotate appends a header "length" holding the value's length in decimal.
func annotate(r udf.Record) (udf.Record, error) {
	h := udf.Header{Name: []byte("length"), Value: strconv.AppendInt(nil, int64(len(r.Value)), 10)}
	r.Headers = append(r.Headers[:len(r.Headers):len(r.Headers)], h)
	return r, nil
}

// crash panics on the value "crash" and passes other records through.
func crash(r udf.Record) (udf.Record, error) {
	if string(r.Value) == "crash" {
		panic("crash requested")
	}
	return r, nil
}

// logValue writes the value to the platform's logs at info level and passes
// the record through.
func logValue(r udf.Record) (udf.Record, error) {
	udf.Log(udf.LevelInfo, string(r.Value))
	return r, nil
}

// nonempty keeps the records whose value is not empty.
func nonempty(r udf.Record) (bool, error) {
	return len(r.Value) > 0, nil
}

// errBadField fails a record that has the field "!".
var errBadField = errors.New(`field "!" is not allowed`)

// fields emits one record per comma-separated field of the value, keeping the
// key, timestamp and headers. A field "!" fails the record, and none of its
// fields are emitted.
func fields(r udf.Record, emit func(udf.Record)) error {
	for f := range bytes.SplitSeq(r.Value, []byte(",")) {
		if string(f) == "!" {
			return errBadField
		}
		r.Value = f
		emit(r)
	}
	return nil
}

// byValue makes the value the key.
func byValue(r udf.Record) ([]byte, error) {
	return r.Value, nil
}

// parseTime reads the timestamp from the value, decimal milliseconds since
// the epoch; a value that is not a number fails the record.
func parseTime(r udf.Record) (int64, error) {
	return strconv.ParseInt(string(r.Value), 10, 64)
}

// main never runs: the module is a reactor, and the host calls _initialize,
// which runs init.
func main() {}
