package main

import (
	"bytes"
	"math"
	"testing"
	"time"

	"wasmstream.io/platform/runtime"
)

func TestRenderWatch(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	wm, end := at.UnixMilli(), int64(math.MaxInt64)
	first := watchSample{at: at, job: runtime.JobInfo{ID: "j1", Name: "clicks", State: runtime.StateRunning, Vertices: []runtime.VertexInfo{
		{ID: "gen", Parallelism: 1, RecordsOut: 1000},
		{ID: "slow", Parallelism: 2, RecordsIn: 900, RecordsOut: 900},
	}}}
	later := watchSample{at: at.Add(2 * time.Second), job: runtime.JobInfo{ID: "j1", Name: "clicks", State: runtime.StateRestarting, Restarts: 1,
		Failure: "task slow: trap", Vertices: []runtime.VertexInfo{
			{ID: "gen", Parallelism: 1, RecordsOut: 3000, Watermark: &wm},
			{ID: "slow", Parallelism: 2, RecordsIn: 1900, RecordsOut: 1902, Watermark: &end},
		}},
		bp: runtime.BackpressureInfo{Vertices: []runtime.VertexBackpressure{{ID: "gen", Level: "HIGH", Ratio: 0.987}, {ID: "slow", Level: "OK"}},
			Bottleneck: &runtime.Bottleneck{Vertex: "slow", Task: "slow", Reason: "busy 1.00 of the time"}},
	}
	for _, tc := range []struct {
		name      string
		cur, prev watchSample
		first     bool
		want      string
	}{
		{name: "first poll", cur: first, first: true, want: `job j1 (clicks) RUNNING
VERTEX  PARALLELISM  IN   IN/S  OUT   OUT/S  WATERMARK  BACKPRESSURE
gen     1            0    -     1000  -      -          -
slow    2            900  -     900   -      -          -
`},
		{name: "rates since the previous poll", cur: later, prev: first, want: `job j1 (clicks) RESTARTING, 1 restarts
failure: task slow: trap
VERTEX  PARALLELISM  IN    IN/S  OUT   OUT/S  WATERMARK                 BACKPRESSURE
gen     1            0     0     3000  1000   2026-01-02T03:04:05.000Z  HIGH 0.99
slow    2            1900  500   1902  501    end                       OK 0.00
bottleneck: slow (task slow): busy 1.00 of the time
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			prev := &tc.prev
			if tc.first {
				prev = nil
			}
			renderWatch(&b, tc.cur, prev)
			if b.String() != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", b.String(), tc.want)
			}
		})
	}
}
