// Command joinkinds is a UDF module with a join and a coGroup function whose
// outputs show everything the platform gives them: key, window, both
// records, their timestamps and errors. udfs/joinkinds-rust, -c and -as are
// the same functions in other languages; a test compares their output
// entries with this module's. Build it with make.
package main

import (
	"errors"
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
)

func init() {
	udf.Join("pairs", pairs)
	udf.CoGroup("sides", sides)
}

// errFail fails a group whose left record is "fail".
var errFail = errors.New("pairs: fail")

// out is the buffer results are built in; emit copies them.
var out []byte

// pairs emits "key|start|end|left|left ts|right|right ts" for each pair;
// nothing when the right value is "skip"; the line twice, the second time
// with timestamp 7 and key "k2", when the left value is "two"; and fails the
// group when the left value is "fail".
func pairs(key []byte, w udf.Window, left, right udf.Record, emit func(udf.Record)) error {
	switch {
	case string(left.Value) == "fail":
		return errFail
	case string(right.Value) == "skip":
		return nil
	}
	out = append(out[:0], key...)
	out = appendWindow(out, w)
	out = appendRecord(out, left)
	out = appendRecord(out, right)
	emit(udf.Record{Value: out})
	if string(left.Value) == "two" {
		emit(udf.Record{Key: []byte("k2"), Value: out, Timestamp: 7})
	}
	return nil
}

// sides emits one record per group, "key|start|end|L=n:v,v|R=m:v,v", the
// values of each side in order.
func sides(key []byte, w udf.Window, left, right []udf.Record, emit func(udf.Record)) error {
	out = append(out[:0], key...)
	out = appendWindow(out, w)
	out = appendSide(out, "|L=", left)
	out = appendSide(out, "|R=", right)
	emit(udf.Record{Value: out})
	return nil
}

func appendWindow(b []byte, w udf.Window) []byte {
	b = append(b, '|')
	b = strconv.AppendInt(b, w.Start, 10)
	b = append(b, '|')
	return strconv.AppendInt(b, w.End, 10)
}

func appendRecord(b []byte, r udf.Record) []byte {
	b = append(b, '|')
	b = append(b, r.Value...)
	b = append(b, '|')
	return strconv.AppendInt(b, r.Timestamp, 10)
}

func appendSide(b []byte, label string, recs []udf.Record) []byte {
	b = append(b, label...)
	b = strconv.AppendInt(b, int64(len(recs)), 10)
	b = append(b, ':')
	for i, r := range recs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r.Value...)
	}
	return b
}

func main() {}
