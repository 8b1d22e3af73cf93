package udf

import (
	"errors"
	"testing"

	"wasmstream.io/platform/abi"
)

func TestResolveErrors(t *testing.T) {
	in := []Record{rec("", "a", 0)}
	tests := []struct {
		name      string
		frame     []byte
		want      string
		malformed bool
	}{
		{"whole batch", abi.AppendEntryError(abi.AppendInputHeader(nil, 1), abi.AllRecords, "out of memory"),
			"udf: the whole batch failed: out of memory", false},
		{"bad index", abi.AppendEntryKeep(abi.AppendInputHeader(nil, 1), 1),
			"malformed frame at byte 5: entry 0 names input 1 of 1", true},
		{"short", []byte{1}, "malformed frame at byte 0: want 4 bytes, have 1", true},
		{"missing entry", abi.AppendInputHeader(nil, 1), "malformed frame at byte 4: want 1 byte, have 0", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := resolve(tt.frame, in)
			if out != nil || err == nil || err.Error() != tt.want || errors.Is(err, abi.ErrMalformedFrame) != tt.malformed {
				t.Fatalf("got %v, %v; want error %q", out, err, tt.want)
			}
		})
	}
}
