package udfdev

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/internal/wasmbuild"
)

func TestRun(t *testing.T) {
	kinds := wasmbuild.UDF(t, "kinds-c")
	in := []abi.Record{
		{Key: []byte("k"), Value: []byte("a,b"), Timestamp: 1, Headers: []abi.Header{{Name: []byte("h"), Value: []byte("1")}}},
		{Value: []byte("c,!")},
		{Key: []byte{0xff}, Value: []byte("")},
	}
	tests := []struct {
		function string
		batch    int
		want     string
	}{
		{"fields", 0, `{"input":0,"key":"k","value":"a","timestamp":1,"headers":[{"name":"h","value":"1"}]}
{"input":0,"key":"k","value":"b","timestamp":1,"headers":[{"name":"h","value":"1"}]}
{"input":1,"error":"field \"!\" is not allowed"}
{"input":2,"key_base64":"/w==","value":"","timestamp":0}
`},
		{"fields", 1, `{"input":0,"key":"k","value":"a","timestamp":1,"headers":[{"name":"h","value":"1"}]}
{"input":0,"key":"k","value":"b","timestamp":1,"headers":[{"name":"h","value":"1"}]}
{"input":1,"error":"field \"!\" is not allowed"}
{"input":2,"key_base64":"/w==","value":"","timestamp":0}
`},
		{"nonempty", 2, `{"input":0,"key":"k","value":"a,b","timestamp":1,"headers":[{"name":"h","value":"1"}]}
{"input":1,"key":"","value":"c,!","timestamp":0}
`},
		{"swap", 0, `{"input":0,"key":"a,b","value":"k","timestamp":1,"headers":[{"name":"h","value":"1"}]}
{"input":1,"key":"c,!","value":"","timestamp":0}
{"input":2,"key":"","value_base64":"/w==","timestamp":0}
`},
		{"by_value", 0, `{"input":0,"key":"a,b","value":"a,b","timestamp":1,"headers":[{"name":"h","value":"1"}]}
{"input":1,"key":"c,!","value":"c,!","timestamp":0}
{"input":2,"key":"","value":"","timestamp":0}
`},
		{"parse_time", 0, `{"input":0,"error":"not a decimal number"}
{"input":1,"error":"not a decimal number"}
{"input":2,"error":"not a decimal number"}
`},
	}
	for _, tt := range tests {
		t.Run(tt.function, func(t *testing.T) {
			var out bytes.Buffer
			if err := Run(context.Background(), kinds, in, &out, Options{Function: tt.function, BatchSize: tt.batch}); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", out.String(), tt.want)
			}
		})
	}
}

func TestRunFails(t *testing.T) {
	kinds := wasmbuild.UDF(t, "kinds-c")
	faulty := wasmbuild.UDF(t, "faulty-wat")
	tests := []struct {
		name     string
		wasm     []byte
		function string
		want     string
	}{
		{"unknown function", kinds, "nope", `the module has no function "nope"; it has swap (map), delay (map), annotate (map), crash (map), log (map), nonempty (filter), fields (flat_map), by_value (key), parse_time (timestamp)`},
		{"trap", kinds, "crash", "function[crash]: trap"},
		{"invalid module", []byte("nope"), "x", "invalid module: not a valid module"},
		{"trap in wat", faulty, "poison", "function[poison]: trap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []abi.Record{{Value: []byte("crash")}, {Value: []byte("poison")}}
			err := Run(context.Background(), tt.wasm, in, &bytes.Buffer{}, Options{Function: tt.function})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
