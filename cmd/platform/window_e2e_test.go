package main

import (
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"testing"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

// windowClick is a click record of the window tests.
type windowClick struct {
	user   string
	amount int
	ts     int64
}

func (c windowClick) json() []byte {
	return fmt.Appendf(nil, `{"user":%q,"page":"/p","amount":%d,"ts":%d}`, c.user, c.amount, c.ts)
}

// windowBase is a multiple of 10 s, the windows' size.
const windowBase = 1_700_000_000_000

// TestWindowUDFAggregateEndToEnd runs a bounded job through JetStream: two
// subject filters read by two source subtasks, each with its own
// bounded-out-of-orderness watermark, and a keyed tumbling window with the
// avg UDF aggregate. The input is out of order within the bound, so no
// record is late and the result is exact.
func TestWindowUDFAggregateEndToEnd(t *testing.T) {
	ts := startTestServer(t)
	id := ts.upload(wasmbuild.UDF(t, "avg"))
	rng := rand.New(rand.NewSource(1))
	var clicks []windowClick
	var payloads [][]byte
	for i := 0; i < 4000; i++ {
		c := windowClick{user: fmt.Sprintf("u%d", rng.Intn(5)), amount: rng.Intn(1000), ts: windowBase + int64(i)*37 - int64(rng.Intn(500))}
		clicks = append(clicks, c)
		payloads = append(payloads, c.json())
	}
	ts.stream("CLICKS", []string{"clicks.a", "clicks.b"}, payloads)
	ts.stream("AVGS", []string{"avgs"}, nil)
	job := ts.submit(fmt.Sprintf(`
name: averages
parallelism: 2
sources:
  - id: clicks
    jetstream: {stream: CLICKS, subjects: [clicks.a, clicks.b], bounded: true}
    timestamp: {field: ts}
    watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 1s, interval: 0s}
operators:
  - id: avg
    input: clicks
    key_by: {field: user}
    window: {type: tumbling, size: 10s}
    aggregate: {module: %s, function: avg}
sinks:
  - id: out
    input: avg
    jetstream: {subject: avgs}
`, id))
	info := ts.wait(job)
	if info.State != runtime.StateFinished {
		t.Fatalf("job %s: %s", info.State, info.Failure)
	}

	type win struct {
		user  string
		start int64
	}
	sums, counts := map[win]float64{}, map[win]int64{}
	for _, c := range clicks {
		w := win{c.user, c.ts - (c.ts-windowBase)%10_000}
		if c.ts < windowBase && (windowBase-c.ts)%10_000 != 0 {
			w.start -= 10_000
		}
		sums[w] += float64(c.amount)
		counts[w]++
	}
	var want []string
	for w, n := range counts {
		want = append(want, fmt.Sprintf(`%d {"key":%q,"window_start":%d,"window_end":%d,"avg":%s,"count":%d}`,
			w.start+9_999, w.user, w.start, w.start+10_000, strconv.FormatFloat(sums[w]/float64(n), 'f', -1, 64), n))
	}
	var got []string
	for _, m := range ts.read("AVGS") {
		got = append(got, m.Headers().Get("Platform-Timestamp")+" "+string(m.Data()))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("got %d results, want %d:\n got %v\nwant %v", len(got), len(want), got, want)
	}
	for _, v := range info.Vertices {
		if v.ID == "avg" && (v.RecordsIn != int64(len(clicks)) || v.LateRecords != 0) {
			t.Fatalf("avg vertex: %+v", v)
		}
	}
}

// TestWindowBuiltinLateOutputEndToEnd runs a bounded job through JetStream
// with a built-in count per user, a watermark after every record and no
// allowed lateness: records behind the watermark go to the late_output
// sink.
func TestWindowBuiltinLateOutputEndToEnd(t *testing.T) {
	ts := startTestServer(t)
	clicks := []windowClick{
		{"a", 1, windowBase + 1_000}, {"b", 1, windowBase + 2_000}, {"a", 1, windowBase + 9_000},
		{"a", 1, windowBase + 12_000}, // watermark 10_999 + base: [0, 10 s) fires
		{"b", 1, windowBase + 3_000},  // late
		{"b", 1, windowBase + 15_000}, {"a", 1, windowBase + 31_000},
		{"a", 1, windowBase + 19_999}, // late: [10 s, 20 s) fired at watermark 29_999
		{"b", 1, windowBase + 30_500},
	}
	var payloads [][]byte
	for _, c := range clicks {
		payloads = append(payloads, c.json())
	}
	ts.stream("EVENTS", []string{"events"}, payloads)
	ts.stream("COUNTS", []string{"counts", "late"}, nil)
	job := ts.submit(`
name: counts
parallelism: 1
sources:
  - id: events
    jetstream: {stream: EVENTS, subjects: [events], bounded: true}
    timestamp: {field: ts}
    watermark: {strategy: bounded_out_of_orderness, interval: 0s}
operators:
  - id: count
    input: events
    key_by: {field: user}
    window: {type: tumbling, size: 10s}
    aggregate: {builtin: count}
    late_output: late
sinks:
  - id: out
    input: count
    jetstream: {subject: counts}
  - id: late
    jetstream: {subject: late}
`)
	info := ts.wait(job)
	if info.State != runtime.StateFinished {
		t.Fatalf("job %s: %s", info.State, info.Failure)
	}
	result := func(user string, start int64, n int) string {
		return fmt.Sprintf(`counts {"key":%q,"window_start":%d,"window_end":%d,"value":%d}`, user, windowBase+start, windowBase+start+10_000, n)
	}
	want := []string{
		result("a", 0, 2), result("b", 0, 1),
		result("a", 10_000, 1), result("b", 10_000, 1),
		result("a", 30_000, 1), result("b", 30_000, 1),
		"late " + string(clicks[4].json()), "late " + string(clicks[7].json()),
	}
	// Each sink's output is in order; the two sinks' are interleaved as
	// their tasks ran.
	var counts, late []string
	for _, m := range ts.read("COUNTS") {
		line := m.Subject() + " " + string(m.Data())
		if m.Subject() == "late" {
			late = append(late, line)
		} else {
			counts = append(counts, line)
		}
	}
	if got := append(counts, late...); !slices.Equal(got, want) {
		t.Fatalf("got:\n%v\nwant:\n%v", got, want)
	}
	for _, v := range info.Vertices {
		if v.ID == "count" && v.LateRecords != 2 {
			t.Fatalf("count vertex: %+v", v)
		}
	}
}
