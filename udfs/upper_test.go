package udfs

import (
	"bytes"
	"context"
	"reflect"
	"testing"

	"wasmstream.io/platform/abi"
)

// asciiUpper is the expected output of upper.
func asciiUpper(b []byte) []byte {
	out := clone(b)
	for i, c := range out {
		if 'a' <= c && c <= 'z' {
			out[i] = c - 32
		}
	}
	return out
}

// upperInputs covers every byte value, every length up to 200 (each way
// upper-wat divides a value into pieces), keys, headers and a batch large
// enough to grow the input region.
func upperInputs() []struct {
	name string
	recs []abi.Record
} {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	var lengths []abi.Record
	for n := range 201 {
		lengths = append(lengths, abi.Record{Value: bytes.Repeat([]byte("xY_z{a@"), 29)[:n], Timestamp: int64(n)})
	}
	var large []abi.Record
	for i := range 5000 {
		large = append(large, abi.Record{Key: []byte("key"), Value: bytes.Repeat([]byte{byte('a' + i%26)}, 100)})
	}
	return []struct {
		name string
		recs []abi.Record
	}{
		{"every byte", []abi.Record{{Value: all}, {Value: all[1:]}}},
		{"lengths", lengths},
		{"key and headers", []abi.Record{{Key: []byte("Key"), Value: []byte("Hello, World"), Timestamp: -9,
			Headers: []abi.Header{{Name: []byte("h"), Value: []byte("v")}, {Name: []byte("e")}}}}},
		{"empty batch", nil},
		{"large batch", large},
	}
}

func TestUpper(t *testing.T) {
	for _, module := range []string{"upper", "upper-wat"} {
		in := instantiate(t, module)
		for _, tt := range upperInputs() {
			t.Run(module+"/"+tt.name, func(t *testing.T) {
				got, err := in.run(context.Background(), "upper", tt.recs)
				if err != nil {
					t.Fatal(err)
				}
				var want []abi.Entry
				for i := range tt.recs {
					want = append(want, abi.Entry{Tag: abi.TagRecord, Index: uint32(i), Value: asciiUpper(tt.recs[i].Value)})
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("got %d entries, want %d; first difference at %d", len(got), len(want), firstDifference(got, want))
				}
			})
		}
	}
}

func firstDifference(a, b []abi.Entry) int {
	for i := range min(len(a), len(b)) {
		if !reflect.DeepEqual(a[i], b[i]) {
			return i
		}
	}
	return min(len(a), len(b))
}
