package main

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"wasmstream.io/platform/runtime"
)

// joinEvent is an impression or a click of the join tests.
type joinEvent struct {
	user string
	ad   int
	ts   int64
}

func (e joinEvent) json() []byte {
	return fmt.Appendf(nil, `{"user":%q,"ad":%d,"ts":%d}`, e.user, e.ad, e.ts)
}

// TestIntervalJoinEndToEnd runs click attribution through JetStream: every
// click is joined with the impressions of its user from 5 s before it up to
// the click itself (an interval join with impressions on the left, bounds
// 0 and +5 s inclusive). Both streams are in time order, so nothing is late
// and the output is exactly the pairs a nested loop finds.
func TestIntervalJoinEndToEnd(t *testing.T) {
	ts := startTestServer(t)
	rng := rand.New(rand.NewSource(3))
	gen := func(n int, step int64) ([]joinEvent, [][]byte) {
		var evs []joinEvent
		var payloads [][]byte
		at := int64(windowBase)
		for range n {
			at += rng.Int63n(step)
			e := joinEvent{user: fmt.Sprintf("u%d", rng.Intn(20)), ad: rng.Intn(100), ts: at}
			evs = append(evs, e)
			payloads = append(payloads, e.json())
		}
		return evs, payloads
	}
	imps, impPayloads := gen(3000, 400)
	clicks, clickPayloads := gen(1000, 1200)
	ts.stream("IMPS", []string{"imps"}, impPayloads)
	ts.stream("CLICKS", []string{"clicks"}, clickPayloads)
	ts.stream("ATTRIBUTED", []string{"attributed"}, nil)
	job := ts.submit(`
name: attribution
parallelism: 2
sources:
  - id: imps
    parallelism: 1
    jetstream: {stream: IMPS, subjects: [imps], bounded: true}
    timestamp: {field: ts}
    watermark: {strategy: monotonous, interval: 0s}
  - id: clicks
    parallelism: 1
    jetstream: {stream: CLICKS, subjects: [clicks], bounded: true}
    timestamp: {field: ts}
    watermark: {strategy: monotonous, interval: 0s}
operators:
  - id: attribute
    join:
      left: {input: imps, key_by: {field: user}}
      right: {input: clicks, key_by: {field: user}}
      interval: {lower: 0s, upper: 5s}
sinks:
  - id: out
    input: attribute
    jetstream: {subject: attributed}
`)
	info := ts.wait(job)
	if info.State != runtime.StateFinished {
		t.Fatalf("job %s: %s", info.State, info.Failure)
	}
	var want []string
	for _, imp := range imps {
		for _, c := range clicks {
			if c.user == imp.user && c.ts >= imp.ts && c.ts <= imp.ts+5000 {
				want = append(want, fmt.Sprintf(`{"key":%q,"left":%s,"right":%s}`, imp.user, imp.json(), c.json()))
			}
		}
	}
	var got []string
	for _, m := range ts.read("ATTRIBUTED") {
		got = append(got, string(m.Data()))
	}
	slices.Sort(got)
	slices.Sort(want)
	if len(want) < 500 {
		t.Fatalf("only %d expected pairs: the test data is too sparse", len(want))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %d pairs, want %d", len(got), len(want))
	}
	for _, v := range info.Vertices {
		if v.ID == "attribute" && (v.RecordsIn != 4000 || v.RecordsOut != int64(len(want)) || v.LateRecords != 0) {
			t.Fatalf("attribute: in %d out %d late %d, want 4000, %d and 0", v.RecordsIn, v.RecordsOut, v.LateRecords, len(want))
		}
	}
}
