// Command upper is a UDF module with one map function, upper, which
// upper-cases the ASCII letters of each record's value. It is the Go SDK's
// benchmark UDF; build it with make.
package main

import (
	"encoding/binary"

	udf "wasmstream.io/platform/sdk/go"
)

func init() {
	udf.Map("upper", upper)
}

// upper upper-cases the value's ASCII letters in place, eight bytes at a
// time, and keeps the key, timestamp and headers.
func upper(r udf.Record) (udf.Record, error) {
	v := r.Value
	for len(v) >= 8 {
		binary.LittleEndian.PutUint64(v, upper8(binary.LittleEndian.Uint64(v)))
		v = v[8:]
	}
	for i, c := range v {
		if 'a' <= c && c <= 'z' {
			v[i] = c - ('a' - 'A')
		}
	}
	return r, nil
}

// upper8 upper-cases the ASCII letters among the eight bytes of x. A byte is
// a lower-case letter when its top bit is clear and its low seven bits are in
// 0x61..0x7a. Adding 0x1f to the low seven bits sets the top bit from 0x61
// on, adding 0x05 from 0x7b on, without carrying into the next byte; the two
// sums differ in the top bit exactly for letters, whose bit 0x20 is then
// flipped.
func upper8(x uint64) uint64 {
	const ones = 0x0101010101010101
	low := x & (0x7f * ones)
	letters := ((low + 0x1f*ones) ^ (low + 0x05*ones)) &^ x & (0x80 * ones)
	return x ^ letters>>2
}

// main never runs: the module is a reactor, and the host calls _initialize,
// which runs init.
func main() {}
