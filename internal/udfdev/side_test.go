package udfdev

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"wasmstream.io/platform/internal/wasmbuild"
)

// TestRunSideOutputs runs udfs/triage's process and window_process
// functions with their side outputs declared, and with one of them left
// out, whose records then fail their inputs.
func TestRunSideOutputs(t *testing.T) {
	const orders = `{"key": "u1", "value": {"amount": 5}, "timestamp": 1}
{"key": "u2", "value": {"amount": 950}, "timestamp": 2, "headers": [{"name": "h", "value": "x"}]}
{"key": "u1", "value": {"note": "none"}, "timestamp": 3}
{"key": "u2", "value": {"amount": 10}, "timestamp": 1500}
`
	tests := []struct {
		name, function string
		sides          []string
		batch          int
		window         time.Duration
		want           string
	}{
		{"process, batches of one", "triage", []string{"large", "invalid"}, 1, 0, `{"input":0,"key":"u1","value":"{\"amount\":5}","timestamp":1}
{"side_output":"large","key":"u2","value":"{\"amount\":950}","timestamp":2,"headers":[{"name":"h","value":"x"}]}
{"side_output":"invalid","key":"u1","value":"{\"note\":\"none\"}","timestamp":3}
{"input":3,"key":"u2","value":"{\"amount\":10}","timestamp":1500}
`},
		// A batch's side records follow its main outputs; an output names
		// its key group's last record as its input.
		{"process, one batch", "triage", []string{"large", "invalid"}, 1024, 0, `{"input":2,"key":"u1","value":"{\"amount\":5}","timestamp":1}
{"input":3,"key":"u2","value":"{\"amount\":10}","timestamp":1500}
{"side_output":"large","key":"u2","value":"{\"amount\":950}","timestamp":2,"headers":[{"name":"h","value":"x"}]}
{"side_output":"invalid","key":"u1","value":"{\"note\":\"none\"}","timestamp":3}
`},
		{"an undeclared tag fails its input", "triage", []string{"large"}, 1, 0, `{"input":0,"key":"u1","value":"{\"amount\":5}","timestamp":1}
{"side_output":"large","key":"u2","value":"{\"amount\":950}","timestamp":2,"headers":[{"name":"h","value":"x"}]}
{"input":2,"error":"side output \"invalid\" is not declared: operator \"triage\"'s side_outputs are large"}
{"input":3,"key":"u2","value":"{\"amount\":10}","timestamp":1500}
`},
		// The final watermark fires both windows in one pass, and the side
		// records follow the windows' results.
		{"window_process", "tally", []string{"large"}, 1024, time.Second, `{"window":{"start":0,"end":1000},"key":"u1","value":"2","timestamp":999}
{"window":{"start":0,"end":1000},"key":"u2","value":"1","timestamp":999}
{"window":{"start":1000,"end":2000},"key":"u2","value":"1","timestamp":1999}
{"side_output":"large","key":"u2","value":"{\"amount\":950}","timestamp":999}
`},
	}
	wasm := wasmbuild.UDF(t, "triage")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, steps, err := ReadInput(strings.NewReader(orders))
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			opt := Options{Function: tt.function, SideOutputs: tt.sides, BatchSize: tt.batch, Window: tt.window, Steps: steps}
			if err := Run(context.Background(), wasm, recs, &out, opt); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", out.String(), tt.want)
			}
		})
	}
}
