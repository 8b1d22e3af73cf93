package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/runtime/spec"
)

// TestWindowJoinUDFJobs runs Nexmark query 8 with the newusers module: a
// tumbling window join of new persons with the auctions they opened, through
// its join function and (as a left outer join) its co_group function.
func TestWindowJoinUDFJobs(t *testing.T) {
	const count = 5000
	m := newTestManager(t)
	mod, err := m.UploadModule(context.Background(), wasmbuild.UDF(t, "newusers"))
	if err != nil {
		t.Fatal(err)
	}
	persons, pairs, intervalPairs := nexmarkQ8(t, count, 10_000)
	if persons != count/50 || pairs < 20 || intervalPairs < 20 {
		t.Fatalf("the generator made %d persons, %d pairs and %d interval pairs", persons, pairs, intervalPairs)
	}
	tests := []struct {
		name string
		fn   string
		want int64
	}{
		{"join: one record per person and auction", `window: {type: tumbling, size: 10s}
      function: {module: %s, function: new_user}`, pairs},
		{"co_group: one record per person, with or without auctions", `window: {type: tumbling, size: 10s}
      co_group: {module: %s, function: auction_counts}`, persons},
		{"interval join: auctions up to 10 s after the person joined", `interval: {lower: 0s, upper: 10s}
      function: {module: %s, function: new_user}`, intervalPairs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := runJob(t, m, fmt.Sprintf(`
name: q8
sources: [{id: nexmark, generator: {kind: nexmark, count: %d}, watermark: {strategy: monotonous, interval: 0s}}]
operators:
  - {id: persons, input: nexmark, flat_map: {module: %[2]s, function: persons}}
  - {id: auctions, input: nexmark, flat_map: {module: %[2]s, function: auctions}}
  - id: q8
    parallelism: 2
    join:
      left: {input: persons, key_by: {field: id}}
      right: {input: auctions, key_by: {field: seller}}
      %[3]s
sinks: [{id: out, input: q8, discard: true}]
`, count, mod.ID, fmt.Sprintf(tt.fn, mod.ID)))
			q8 := vertexInfo(info, "q8")
			if q8.RecordsIn != persons*4 || q8.RecordsOut != tt.want || q8.LateRecords != 0 {
				t.Fatalf("q8: in %d out %d late %d, want %d, %d, 0", q8.RecordsIn, q8.RecordsOut, q8.LateRecords, persons*4, tt.want)
			}
		})
	}
}

// nexmarkQ8 reads count Nexmark events from the generator and returns the
// number of persons, of (person, auction) pairs in the same tumbling window
// of size ms, and of pairs whose auction is at most size ms after the
// person.
func nexmarkQ8(t *testing.T, count int, size int64) (persons, pairs, intervalPairs int64) {
	src, err := connector.NewGenerator(connector.GeneratorConfig{Kind: "nexmark", Count: int64(count), Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	type slot struct {
		id     int64
		window int64
	}
	joined, opened := map[slot]bool{}, map[slot]int64{}
	var people, auctions []slot
	var b abi.Batch
	for b.Len() < count {
		if err := src.Fetch(context.Background(), &b, count, time.Second); err != nil {
			break
		}
	}
	for _, r := range b.Records {
		var ev struct {
			Person  *struct{ ID int64 }     `json:"person"`
			Auction *struct{ Seller int64 } `json:"auction"`
		}
		if err := json.Unmarshal(r.Value, &ev); err != nil {
			t.Fatal(err)
		}
		w := r.Timestamp - r.Timestamp%size
		switch {
		case ev.Person != nil:
			joined[slot{ev.Person.ID, w}] = true
			people = append(people, slot{ev.Person.ID, r.Timestamp})
			persons++
		case ev.Auction != nil:
			opened[slot{ev.Auction.Seller, w}]++
			auctions = append(auctions, slot{ev.Auction.Seller, r.Timestamp})
		}
	}
	for s := range joined {
		pairs += opened[s]
	}
	for _, p := range people {
		for _, a := range auctions {
			if a.id == p.id && a.window >= p.window && a.window <= p.window+size {
				intervalPairs++
			}
		}
	}
	return persons, pairs, intervalPairs
}

// TestExampleJoinJobsPlan checks that the job specs of udfs/newusers and
// udfs/attribution parse and resolve against their modules.
func TestExampleJoinJobsPlan(t *testing.T) {
	m := newTestManager(t)
	for _, name := range []string{"newusers", "attribution"} {
		t.Run(name, func(t *testing.T) {
			p, mod := planExampleJob(t, m, name)
			if got := p.ModuleIDs(); len(got) != 1 || got[0] != mod.ID {
				t.Fatalf("modules %v", got)
			}
		})
	}
}

// planExampleJob uploads the module of udfs/name to m and plans its job
// spec, udfs/name/job.yaml, with the module in place of ${MODULE}.
func planExampleJob(t *testing.T, m *Manager, name string) (*plan.Plan, ModuleInfo) {
	t.Helper()
	mod, err := m.UploadModule(context.Background(), wasmbuild.UDF(t, name))
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(wasmbuild.Root(), "udfs", name, "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	j, err := spec.Parse([]byte(strings.ReplaceAll(string(text), "${MODULE}", mod.ID)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(j, m.lookupDescription)
	if err != nil {
		t.Fatal(err)
	}
	return p, mod
}
