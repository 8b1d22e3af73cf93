package bench

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// bufferTimeouts are the flush policies compared, as in Flink's network
// stack: 0 flushes every record, larger timeouts fill buffers longer.
var bufferTimeouts = []time.Duration{0, time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond}

// latencyRates are the producer rates latency is measured at besides full
// speed: a busy stream that fills buffers in milliseconds and a sparse one
// that never fills them.
var latencyRates = []int64{100_000, 1_000}

const (
	latencyWarmup = 500 * time.Millisecond
	latencyRun    = 3 * time.Second
	// maxLatencySamples bounds the latencies kept per run.
	maxLatencySamples = 1 << 20
	// fullSpeedRuns is how many full-speed runs give the median.
	fullSpeedRuns = 3
)

// latencyResult is one run: its throughput and its latency percentiles.
type latencyResult struct {
	recordsPerSecond float64
	p50, p99         time.Duration
}

// TestLatencyExperiment measures, for each buffer timeout, one exchange
// edge's throughput at full speed and its end-to-end latency (from the
// producer's emit to the consumer's decode) at full speed and at fixed
// rates.
func TestLatencyExperiment(t *testing.T) {
	needExperiment(t)
	load := loadAverage(t)
	results := map[time.Duration][]latencyResult{}
	for _, timeout := range bufferTimeouts {
		for _, rate := range append([]int64{0}, latencyRates...) {
			r := runLatency(t, timeout, rate)
			t.Logf("buffer_timeout %-6v rate %-7d: %10.0f records/s  p50 %-12v p99 %v", timeout, rate, r.recordsPerSecond, r.p50, r.p99)
			results[timeout] = append(results[timeout], r)
		}
	}
	if err := updateSection("Latency", latencySection(results, load)); err != nil {
		t.Fatal(err)
	}
}

// runLatency measures the pipeline with a producer at rate (0: full speed).
// At full speed it takes the run of median throughput of fullSpeedRuns.
func runLatency(t *testing.T, timeout time.Duration, rate int64) latencyResult {
	if rate > 0 {
		return runLatencyOnce(t, timeout, rate)
	}
	runs := make([]latencyResult, fullSpeedRuns)
	for i := range runs {
		runs[i] = runLatencyOnce(t, timeout, 0)
	}
	slices.SortFunc(runs, func(a, b latencyResult) int { return cmp.Compare(a.recordsPerSecond, b.recordsPerSecond) })
	return runs[len(runs)/2]
}

// runLatencyOnce runs the pipeline with a producer at rate (0: full speed)
// and measures after a warm-up.
func runLatencyOnce(t *testing.T, timeout time.Duration, rate int64) latencyResult {
	p := newPipeline(timeout)
	p.producerRate.Store(rate)
	expected := float64(rate)
	if rate == 0 {
		expected = 20e6
	}
	p.latencyStride = max(int64(expected*latencyRun.Seconds())/maxLatencySamples, 1)
	p.latencies = make([]int64, 0, maxLatencySamples)
	stop := p.run(t)
	time.Sleep(latencyWarmup)
	before, start := p.consumed.Load(), time.Now()
	p.recording.Store(true)
	time.Sleep(latencyRun)
	consumed, elapsed := p.consumed.Load()-before, time.Since(start)
	stop()
	lat := slices.Clone(p.latencies)
	slices.Sort(lat)
	r := latencyResult{recordsPerSecond: float64(consumed) / elapsed.Seconds()}
	if len(lat) > 0 {
		r.p50 = time.Duration(lat[len(lat)/2])
		r.p99 = time.Duration(lat[len(lat)*99/100])
	}
	return r
}

func latencySection(results map[time.Duration][]latencyResult, load string) string {
	var b strings.Builder
	b.WriteString("Flink's network-stack trade-off on this platform's exchange: one edge between two tasks in one\n")
	fmt.Fprintf(&b, "process (%d-byte records, default buffer sizes), for each `buffer_timeout`. Throughput is records/s\n", recordSize)
	fmt.Fprintf(&b, "with both sides unthrottled (the median of %d runs of %v). Latency is from the producer's\n", fullSpeedRuns, latencyRun)
	b.WriteString("emit to the consumer's decode of the record, p50 / p99, at full speed (where it is queueing\n")
	b.WriteString("in the bounded buffers) and with the producer held to a fixed rate.\n\n")
	b.WriteString("| buffer_timeout | records/s (full speed) | vs 100ms | latency at full speed |")
	for _, r := range latencyRates {
		fmt.Fprintf(&b, " latency at %s/s |", thousands(r))
	}
	b.WriteString("\n| --- | ---: | ---: | ---: |")
	for range latencyRates {
		b.WriteString(" ---: |")
	}
	b.WriteString("\n")
	base := results[100*time.Millisecond][0].recordsPerSecond
	for _, timeout := range bufferTimeouts {
		rs := results[timeout]
		fmt.Fprintf(&b, "| %v | %s | %.0f%% |", timeout, thousands(int64(rs[0].recordsPerSecond)), 100*rs[0].recordsPerSecond/base)
		for _, r := range rs {
			fmt.Fprintf(&b, " %s / %s |", short(r.p50), short(r.p99))
		}
		b.WriteString("\n")
	}
	b.WriteString("\nA sparse stream waits for the timeout to flush a partial buffer, so its latency follows\n")
	b.WriteString("`buffer_timeout`; a busy stream fills buffers before the timeout and pays the fill time;\n")
	b.WriteString("`0s` sends every record at once, for the lowest latency and the most buffers per record.\n\n")
	b.WriteString("Reproduce with `go test ./bench -run LatencyExperiment -experiment -v` (or `make experiments`);\n")
	fmt.Fprintf(&b, "it rewrites this section. Machine: 2 shared cores; load average %s when this run began, so expect noise.\n", load)
	return b.String()
}

// short prints a duration with three significant digits.
func short(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3g s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3g ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.3g µs", float64(d)/1e3)
}

// thousands prints n with comma separators.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
