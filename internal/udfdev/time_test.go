package udfdev

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"wasmstream.io/platform/internal/wasmbuild"
)

// Explicit processing time and watermarks between records make TTL and
// processing-time timers testable, exactly.
func TestRunTimeSteps(t *testing.T) {
	tests := []struct {
		name, module, function, onTimer, input, want string
	}{
		{"ttl expiry", "dedup", "dedup", "", `{"key": "a", "value": "1", "timestamp": 1}
{"processing_time": 3599999}
{"key": "a", "value": "2", "timestamp": 2}
{"processing_time": 3600000}
{"key": "a", "value": "3", "timestamp": 3}
{"key": "b", "value": "4", "timestamp": 4}
`, `{"input":0,"key":"a","value":"1","timestamp":1}
{"input":2,"key":"a","value":"3","timestamp":3}
{"input":3,"key":"b","value":"4","timestamp":4}
{"state":"seen","key":"a","value":"\u0001"}
{"state":"seen","key":"b","value":"\u0001"}
`},
		{"processing-time timers", "idle", "watch", "report", `{"processing_time": 100}
{"key": "a", "value": "x", "timestamp": 1}
{"processing_time": 600}
{"key": "b", "value": "y", "timestamp": 2}
{"key": "a", "value": "z", "timestamp": 3}
{"processing_time": 1599}
{"processing_time": 1600}
{"watermark": 10}
{"processing_time": 5000}
`, `{"timer":{"key":"a","timestamp":1600},"key":"a","value":"idle z","timestamp":1600}
{"timer":{"key":"b","timestamp":1600},"key":"b","value":"idle y","timestamp":1600}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, steps, err := ReadInput(strings.NewReader(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := Run(context.Background(), wasmbuild.UDF(t, tt.module), recs, &out, Options{Function: tt.function, OnTimer: tt.onTimer, Steps: steps}); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", out.String(), tt.want)
			}
		})
	}
}

// Lines that move time are checked, each error naming its line.
func TestReadInputTimeLines(t *testing.T) {
	for _, c := range []struct{ input, want string }{
		{`{"watermark": 5}` + "\n" + `{"watermark": 4}`, "input line 2: watermark 4 goes back from 5"},
		{`{"processing_time": 5}` + "\n\n" + `{"processing_time": 1}`, "input line 3: processing_time 1 goes back from 5"},
		{`{"watermark": 5, "processing_time": 1}`, "input line 1: a line that moves time has watermark or processing_time, not both"},
		{`{"watermark": 5, "key": "a"}`, "input line 1: a line that moves time has only watermark or processing_time"},
		{`{"watermark": "soon"}`, "input line 1: a line that moves time has only watermark or processing_time"},
	} {
		if _, _, err := ReadInput(strings.NewReader(c.input)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.input, err, c.want)
		}
	}
	recs, steps, err := ReadInput(strings.NewReader(`{"value": "a"}` + "\n" + `{"watermark": 7}` + "\n" + `{"value": "b"}` + "\n" + `{"processing_time": 9}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || len(steps) != 2 || steps[0].Before != 1 || *steps[0].Watermark != 7 || steps[1].Before != 2 || *steps[1].ProcessingTime != 9 {
		t.Errorf("records %d, steps %+v", len(recs), steps)
	}
}

// A processing-time window fires when an explicit processing time passes
// its end, with the records that arrived in it whatever their timestamps;
// the end of the input fires the rest.
func TestRunProcessingTimeWindows(t *testing.T) {
	recs, steps, err := ReadInput(strings.NewReader(`{"processing_time": 1000}
{"key": "u1", "value": {"amount": 1}, "timestamp": 99999}
{"key": "u2", "value": {"amount": 2}, "timestamp": 5}
{"processing_time": 9998}
{"key": "u1", "value": {"amount": 3}, "timestamp": 1}
{"processing_time": 9999}
{"key": "u1", "value": {"amount": 4}, "timestamp": 2}
{"processing_time": 15000}
{"key": "u2", "value": {"amount": 5}, "timestamp": 3}
`))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Run(context.Background(), wasmbuild.UDF(t, "avg-c"), recs, &out, Options{Function: "count", Window: 10 * time.Second, Steps: steps, ProcessingTime: true}); err != nil {
		t.Fatal(err)
	}
	want := `{"window":{"start":0,"end":10000},"key":"u1","value":"2","timestamp":9999}
{"window":{"start":0,"end":10000},"key":"u2","value":"1","timestamp":9999}
{"window":{"start":10000,"end":20000},"key":"u1","value":"1","timestamp":19999}
{"window":{"start":10000,"end":20000},"key":"u2","value":"1","timestamp":19999}
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	if err := Run(context.Background(), wasmbuild.UDF(t, "dedup"), recs, &bytes.Buffer{}, Options{Function: "dedup", ProcessingTime: true}); err == nil || !strings.Contains(err.Error(), "processing-time windows go with") {
		t.Errorf("processing-time windows for a process function: %v", err)
	}
}
