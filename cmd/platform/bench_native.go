package main

import (
	"fmt"
	goruntime "runtime"
	"time"

	"wasmstream.io/platform/internal/cputime"
	"wasmstream.io/platform/internal/nexmark"
)

// runNativeNexmark runs the query's plain-Go reference over the same events
// as the job, on this goroutine: the generator writes each event's JSON,
// nexmark.Parse reads it back, the reference computes the rows (without
// sorting them). It also times the reference alone, over the parsed events. withRSS says whether the peak RSS is the run's own (no
// platform ran in this process before).
func runNativeNexmark(b benchNexmark, withRSS bool) (benchResult, error) {
	query, ok := nexmark.References[b.query]
	if !ok {
		return benchResult{}, fmt.Errorf("no reference of %s", b.query)
	}
	goruntime.GC()
	start, cpu := time.Now(), cputime.Process()
	events, err := nexmark.Events(nexmark.Config{Count: b.events, Seed: b.seed, EventRate: b.rate})
	if err != nil {
		return benchResult{}, err
	}
	made, madeCPU := time.Now(), cputime.Process()
	rows := query(events)
	r := benchResult{wall: time.Since(start), cpu: time.Duration(cputime.Process() - cpu), rows: int64(rows)}
	r.queryWall, r.queryCPU = time.Since(made), time.Duration(cputime.Process()-madeCPU)
	if withRSS {
		r.peakRSS = cputime.PeakRSS()
	}
	goruntime.KeepAlive(events)
	return r, nil
}
