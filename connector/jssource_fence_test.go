package connector

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"
)

// TestJetStreamSourceSkipsFences: a source of the whole stream a fenced sink
// writes to reads the sink's records, without the fence messages and
// without the headers the sink wrote them with, and ends at the last fence.
func TestJetStreamSourceSkipsFences(t *testing.T) {
	ts := startServer(t)
	newTxStream(t, ts, time.Minute)
	s := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", Fence: takeTestFence(t, ts.js, "job.out.0")})
	if err := commitEpoch(t, s, 1, txRecords(0, 3)); err != nil {
		t.Fatal(err)
	}
	last := takeTestFence(t, ts.js, "job.out.0")
	src := newSource(t, ts, JetStreamSourceConfig{Stream: "TX", Bounded: true, Parallelism: 1})
	gs := readToEOF(t, src)
	if len(gs) != 3 {
		t.Fatalf("read %v, want 3 records", gs)
	}
	var want []got
	for i := range 3 {
		want = append(want, got{value: fmt.Sprintf("v%d", i), ts: gs[i].ts, headers: fmt.Sprintf("Platform-Id=job.out.0.1.%d;Platform-Key=k;Platform-Timestamp=%d", i, i)})
	}
	if !slices.Equal(gs, want) {
		t.Fatalf("read %v, want %v", gs, want)
	}
	if end := src.End(); !maps.Equal(end, map[string]uint64{">": last.Seq}) {
		t.Fatalf("End = %v, want >: %d", end, last.Seq)
	}
}
