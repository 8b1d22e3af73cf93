package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wasmstream.io/platform/internal/wasmbuild"
)

// TestUDFTestSideOutputsAndBroadcast runs `platform udf test` over
// udfs/triage's side outputs and udfs/rules's broadcast_process functions,
// through the command's flags, and checks its exact output and its errors.
func TestUDFTestSideOutputsAndBroadcast(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	triage := write("triage.wasm", wasmbuild.UDF(t, "triage"))
	rules := write("rules.wasm", wasmbuild.UDF(t, "rules"))
	orders := write("orders.jsonl", []byte(`{"key": "u1", "value": {"amount": 5}, "timestamp": 1}
{"key": "u2", "value": {"amount": 950}, "timestamp": 2}
{"key": "u1", "value": {"note": "none"}, "timestamp": 3}
`))
	events := write("events.jsonl", []byte(`{"broadcast": {"value": {"rule": "big", "min": 100}}}
{"key": "u1", "value": {"amount": 150}, "timestamp": 2}
{"broadcast": {"value": {"rule": "big", "min": 200}}}
{"key": "u1", "value": {"amount": 150}, "timestamp": 3}
{"key": "u1", "value": {"amount": 250}, "timestamp": 4}
`))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"side outputs", []string{"udf", "test", triage, "--function", "triage", "--input", orders, "--batch", "1", "--side-outputs", "large,invalid"}, `{"input":0,"key":"u1","value":"{\"amount\":5}","timestamp":1}
{"side_output":"large","key":"u2","value":"{\"amount\":950}","timestamp":2}
{"side_output":"invalid","key":"u1","value":"{\"note\":\"none\"}","timestamp":3}
`},
		{"broadcast", []string{"udf", "test", rules, "--function", "match", "--broadcast", "update", "--input", events, "--batch", "1"}, `{"input":0,"key":"u1","value":"{\"user\":\"u1\",\"rule\":\"big\",\"amount\":150,\"hits\":1}","timestamp":2}
{"input":2,"key":"u1","value":"{\"user\":\"u1\",\"rule\":\"big\",\"amount\":250,\"hits\":2}","timestamp":4}
{"state":"hits","key":"u1","value":"2"}
{"broadcast_state":"rules","map_key":"big","value":"200"}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runCLI(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("udf test printed\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
	errs := []struct {
		name string
		args []string
		want string
	}{
		{"side outputs on a map", []string{"udf", "test", rules, "--function", "update", "--input", orders, "--side-outputs", "large"}, "process_broadcast function"},
		{"broadcast lines without --broadcast", []string{"udf", "test", rules, "--function", "match", "--input", events}, "broadcast lines go with --broadcast"},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := runCLI(t, tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
