package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"wasmstream.io/platform/internal/nexmark"
	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
	"wasmstream.io/platform/udfs/nexmark/queries"
)

// nexmarkTestEvents is the number of events each query's test runs over.
const nexmarkTestEvents = 10_000

// TestNexmarkQueries runs every query of udfs/nexmark/queries on a platform,
// over 10,000 generated events at parallelism 2, with a JetStream sink, and
// compares its rows with the plain-Go reference of internal/nexmark over
// the same events: exactly, as sorted lists of rows. Queries whose result
// updates rows compare the last row of each key; query 12, in processing
// time, compares its counts summed per bidder. Queries 15 to 17 run a
// second time at one event per second, so that their days change.
func TestNexmarkQueries(t *testing.T) {
	ts := startTestServer(t)
	module := ts.upload(wasmbuild.UDF(t, "nexmark"))
	eventsAt := map[int][]nexmark.Event{}
	for _, rate := range []int{nexmark.DefaultEventRate, 1} {
		events, err := nexmark.Events(nexmark.Config{Count: nexmarkTestEvents, Seed: 5, EventRate: rate})
		if err != nil {
			t.Fatal(err)
		}
		eventsAt[rate] = events
	}
	type run struct {
		query string
		rate  int
	}
	var runs []run
	for _, q := range queries.Names() {
		runs = append(runs, run{q, nexmark.DefaultEventRate})
	}
	runs = append(runs, run{"q15", 1}, run{"q16", 1}, run{"q17", 1})
	if got := len(runs); got != len(nexmarkChecks)+3 {
		t.Fatalf("%d queries with a spec, %d with a check", got-3, len(nexmarkChecks))
	}
	for _, r := range runs {
		t.Run(fmt.Sprintf("%s/%d-per-s", r.query, r.rate), func(t *testing.T) {
			runNexmarkQuery(t, ts, module, "go", r.query, r.rate, eventsAt[r.rate])
		})
	}
}

// nexmarkRustQueries are the queries whose every function udfs/nexmark-rust
// has too.
var nexmarkRustQueries = []string{"q0", "q1", "q2", "q5", "q7"}

// TestNexmarkQueriesInRust runs the queries of nexmarkRustQueries with the
// Rust module in place of the Go one, as TestNexmarkQueries does, and
// compares their rows with the reference's.
func TestNexmarkQueriesInRust(t *testing.T) {
	ts := startTestServer(t)
	module := ts.upload(wasmbuild.UDF(t, "nexmark-rust"))
	events, err := nexmark.Events(nexmark.Config{Count: nexmarkTestEvents, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range nexmarkRustQueries {
		t.Run(q, func(t *testing.T) {
			runNexmarkQuery(t, ts, module, "rust", q, nexmark.DefaultEventRate, events)
		})
	}
}

// runNexmarkQuery runs query over nexmarkTestEvents events of seed 5 at
// rate events per second, at parallelism 2 with the functions of module
// (named lang), into a JetStream stream of its own, and compares its rows
// with the reference's over events (the same events).
func runNexmarkQuery(t *testing.T, ts *testServer, module, lang, query string, rate int, events []nexmark.Event) {
	t.Helper()
	check, ok := nexmarkChecks[query]
	if !ok {
		t.Fatalf("no check for %s", query)
	}
	suffix := fmt.Sprintf("%s_%d_%s", query, rate, lang)
	stream := strings.ToUpper("OUT_" + suffix)
	subject := "out." + suffix
	ts.stream(stream, []string{subject}, nil)
	spec, err := queries.Spec(query, queries.Params{Module: module, Events: nexmarkTestEvents, Seed: 5,
		EventRate: rate, Parallelism: 2, Sink: queries.JetStream(subject)})
	if err != nil {
		t.Fatal(err)
	}
	info := ts.wait(ts.submit(spec))
	if info.State != runtime.StateFinished {
		t.Fatalf("job %s: %s", info.State, info.Failure)
	}
	for _, v := range info.Vertices {
		if v.UDFErrors != 0 || v.LateRecords != 0 {
			t.Fatalf("vertex %s: %d UDF errors, %d late records", v.ID, v.UDFErrors, v.LateRecords)
		}
	}
	got, want, err := check(payloadsOf(ts.read(stream)), events)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("the reference has no rows: the test says nothing")
	}
	compareRows(t, got, want)
	t.Logf("%d rows", len(want))
}

// compareRows compares two lists of rows, each formatted with %+v, in any
// order.
func compareRows(t *testing.T, got, want []string) {
	t.Helper()
	slices.Sort(got)
	slices.Sort(want)
	if slices.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	at := func(rows []string) string {
		if i < len(rows) {
			return rows[i]
		}
		return "(none)"
	}
	t.Fatalf("%d rows, want %d; first difference at row %d:\n got  %s\n want %s", len(got), len(want), i, at(got), at(want))
}
