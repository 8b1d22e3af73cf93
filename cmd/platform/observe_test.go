package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"testing"
	"time"

	"wasmstream.io/platform/runtime"
)

// TestBackpressureAndMetricsEndpoints checks the wiring of
// /v1/jobs/{id}/backpressure and /metrics in a whole platform, with a job
// whose throttled sink backpressures its source.
func TestBackpressureAndMetricsEndpoints(t *testing.T) {
	ts := startTestServer(t)
	id := ts.submit(`
name: slow-sink
sources: [{id: gen, generator: {kind: sequence}}]
sinks: [{id: slow, input: gen, parallelism: 2, discard: true, throttle: 2000}]
`)
	deadline := time.Now().Add(time.Minute)
	var bp runtime.BackpressureInfo
	for bp.Bottleneck == nil {
		if time.Now().After(deadline) {
			t.Fatalf("no bottleneck: %+v", bp)
		}
		time.Sleep(100 * time.Millisecond)
		status, body := ts.call(http.MethodGet, "/v1/jobs/"+id+"/backpressure", "", nil)
		if status != http.StatusOK {
			t.Fatalf("backpressure: %d %s", status, body)
		}
		if err := json.Unmarshal(body, &bp); err != nil {
			t.Fatal(err)
		}
	}
	if b := bp.Bottleneck; b.Vertex != "slow" || b.Task != "slow" {
		t.Errorf("bottleneck %+v, want the sink", b)
	}
	status, body := ts.call(http.MethodGet, "/metrics", "", nil)
	if status != http.StatusOK {
		t.Fatalf("metrics: %d %s", status, body)
	}
	for _, want := range []string{
		`platform_build_info\{go_version="[^"]+",revision="[^"]+",version="dev"\} 1`,
		`platform_task_backpressured_seconds_total\{job_id="` + id + `",job_name="slow-sink",subtask="0",vertex="gen"\} [0-9.e+]+`,
		`platform_exchange_in_pool_usage_ratio\{job_id="` + id + `",job_name="slow-sink",subtask="1",vertex="slow"\} [0-9.e+]+`,
		`platform_jobs\{state="RUNNING"\} 1`,
	} {
		if !regexp.MustCompile(`(?m)^` + want + `$`).Match(body) {
			t.Errorf("/metrics has no line matching %s", want)
		}
	}
}
