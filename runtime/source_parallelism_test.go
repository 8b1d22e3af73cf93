package runtime

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
)

// TestSourceParallelismJobs: a job at parallelism 2 reads a stream through
// as many source subtasks as the source has splits. With one subject
// filter, one source subtask deals the records out to both map subtasks;
// over a stream partitioned by subject at the server (a subject
// transform), one source subtask reads each partition, chained to its map.
// Either way every record comes out once and both map subtasks do work
// (read from their metrics while the job runs).
func TestSourceParallelismJobs(t *testing.T) {
	tests := []struct {
		name       string
		stream     jetstream.StreamConfig
		subjects   string
		sourceSubs int
	}{
		{"one subject", jetstream.StreamConfig{Name: "ONE", Subjects: []string{"orders.*"}}, `[orders.*]`, 1},
		{"two partitions", jetstream.StreamConfig{Name: "PARTS", Subjects: []string{"orders.*"},
			SubjectTransform: &jetstream.SubjectTransformConfig{Source: "orders.*", Destination: "orders.{{partition(2,1)}}.{{wildcard(1)}}"}},
			`[orders.0.*, orders.1.*]`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, js := newJetStreamManager(t)
			ctx := context.Background()
			if _, err := js.CreateStream(ctx, tt.stream); err != nil {
				t.Fatal(err)
			}
			if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "OUT", Subjects: []string{"out"}}); err != nil {
				t.Fatal(err)
			}
			const n = 2000
			var want []string
			for i := range n {
				v := fmt.Sprintf("order-%04d", i)
				if _, err := js.Publish(ctx, fmt.Sprintf("orders.c%d", i%50), []byte(v)); err != nil {
					t.Fatal(err)
				}
				want = append(want, "ORDER-"+v[len("order-"):])
			}
			mod, err := m.UploadModule(ctx, wasmbuild.UDF(t, "upper"))
			if err != nil {
				t.Fatal(err)
			}
			info, err := m.SubmitJob(ctx, fmt.Appendf(nil, `
name: split-%d
parallelism: 2
sources: [{id: in, jetstream: {stream: %s, subjects: %s}}]
operators: [{id: up, input: in, map: {module: %s, function: upper}}]
sinks: [{id: out, input: up, jetstream: {subject: out}}]
`, tt.sourceSubs, tt.stream.Name, tt.subjects, mod.ID))
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "every record out", func() bool { return len(streamValues(t, js, "OUT")) >= n && running(t, m, info.ID) })
			got := streamValues(t, js, "OUT")
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("%d records out, want each of the %d once", len(got), n)
			}
			job, err := m.GetJob(ctx, info.ID)
			if err != nil {
				t.Fatal(err)
			}
			parallelism := map[string]int{}
			for _, v := range job.Vertices {
				parallelism[v.ID] = v.Parallelism
			}
			if parallelism["in"] != tt.sourceSubs || parallelism["up"] != 2 || parallelism["out"] != 2 {
				t.Fatalf("parallelism %v, want in %d, up 2, out 2", parallelism, tt.sourceSubs)
			}
			in := gather(t, m)["platform_vertex_records_in_total"]
			var total float64
			for sub := range 2 {
				v := value(t, in, fmt.Sprintf("job_id=%s,job_name=split-%d,subtask=%d,vertex=up", info.ID, tt.sourceSubs, sub))
				if v == 0 {
					t.Fatalf("map subtask %d had no records", sub)
				}
				total += v
			}
			if total != n {
				t.Fatalf("the map subtasks took %v records, want %d", total, n)
			}
			if _, err := m.CancelJob(ctx, info.ID); err != nil {
				t.Fatal(err)
			}
		})
	}
}
