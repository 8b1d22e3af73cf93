package runtime

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/cputime"
	"wasmstream.io/platform/internal/wasmbuild"
)

// BenchmarkOneSubjectParallelism runs a bounded JSON map job at
// parallelism 2 over a stream read through one subject filter: by default
// (one source subtask rebalancing to two map subtasks), and with the
// source's parallelism set to 2 as every source had before (one subtask
// without a split, its chained map idle). Each op is one run of the job
// over every record; per record: wall time, the process's CPU time, and
// records per second.
func BenchmarkOneSubjectParallelism(b *testing.B) {
	const records = 100000
	m, js := newJetStreamManager(b)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "BIDS", Subjects: []string{"bids"}}); err != nil {
		b.Fatal(err)
	}
	for i := range records {
		bid := fmt.Sprintf(`{"auction":%d,"bidder":%d,"price":%d,"channel":"channel-%d","url":"https://example.com/%d","dateTime":%d,"extra":""}`,
			1000+i%97, 2000+i%89, 100+i, i%4, i, 1700000000000+int64(i))
		if _, err := js.PublishAsync("bids", []byte(bid)); err != nil {
			b.Fatal(err)
		}
	}
	<-js.PublishAsyncComplete()
	mod, err := m.UploadModule(ctx, wasmbuild.UDF(b, "jsonmap-std"))
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, source string }{
		{"source-by-splits", ""},
		{"source-at-job-parallelism", "parallelism: 2, "},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var wall time.Duration
			var cpu int64
			for b.Loop() {
				cpu0, t0 := cputime.Process(), time.Now()
				runBoundedJob(b, m, fmt.Sprintf(`
name: bids
parallelism: 2
sources: [{id: in, %sjetstream: {stream: BIDS, subjects: [bids], bounded: true}}]
operators: [{id: eur, input: in, map: {module: %s, function: bid_eur}}]
sinks: [{id: out, input: eur, discard: true}]
`, bc.source, mod.ID))
				wall += time.Since(t0)
				cpu += cputime.Process() - cpu0
			}
			n := float64(b.N * records)
			b.ReportMetric(float64(wall.Nanoseconds())/n, "wall-ns/record")
			b.ReportMetric(float64(cpu)/n, "cpu-ns/record")
			b.ReportMetric(n/wall.Seconds(), "records/s")
		})
	}
}

// runBoundedJob submits spec and waits until the job has finished.
func runBoundedJob(b *testing.B, m *Manager, spec string) {
	b.Helper()
	ctx := context.Background()
	info, err := m.SubmitJob(ctx, []byte(spec))
	if err != nil {
		b.Fatal(err)
	}
	for {
		got, err := m.GetJob(ctx, info.ID)
		if err != nil {
			b.Fatal(err)
		}
		switch got.State {
		case StateFailed:
			b.Fatalf("job failed: %s", got.Failure)
		case StateFinished:
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
