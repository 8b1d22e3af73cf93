package plan

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// sideJob routes a process function's side outputs to a sink and to an
// operator, and a window's late records to a sink by input.
const sideJob = `
name: sides
sources:
  - {id: clicks, generator: {kind: clicks, count: 10}}
operators:
  - id: first
    input: clicks
    key_by: {field: user}
    process: {module: "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", function: dedup}
    side_outputs: [dups, odd]
  - {id: fix, input: first.odd, map: {module: "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", function: parse}}
  - {id: counts, input: first, key_by: {field: user}, window: {type: tumbling, size: 1s}, aggregate: {builtin: count}}
sinks:
  - {id: out, input: counts, discard: true}
  - {id: dups, input: first.dups, discard: true}
  - {id: fixed, input: fix, discard: true}
  - {id: late, input: counts.late, discard: true}
`

func TestBuildSideOutputs(t *testing.T) {
	p := build(t, sideJob)
	want := []string{
		"clicks->first hash",
		"first->fix forward chained side=odd",
		"first->counts hash",
		"first->dups forward chained side=dups",
		"fix->fixed forward chained",
		"counts->out forward chained",
		"counts->late forward chained side=late",
	}
	if got := shape(p); !reflect.DeepEqual(got, want) {
		t.Fatalf("edges\n got %q\nwant %q", got, want)
	}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q Plan
	if err := json.Unmarshal(data, &q); err != nil {
		t.Fatal(err)
	}
	if got := shape(&q); !reflect.DeepEqual(got, want) {
		t.Fatalf("edges after a round trip\n got %q\nwant %q", got, want)
	}
}

// TestPlanJSONReadsLateEdges decodes a plan encoded before side outputs,
// whose late edges say "late": true.
func TestPlanJSONReadsLateEdges(t *testing.T) {
	data, err := json.Marshal(build(t, testJob))
	if err != nil {
		t.Fatal(err)
	}
	old := bytes.Replace(data, []byte(`"side":"late"`), []byte(`"late":true`), 1)
	if bytes.Equal(old, data) {
		t.Fatal("the plan has no late edge")
	}
	var q Plan
	if err := json.Unmarshal(old, &q); err != nil {
		t.Fatal(err)
	}
	var late []string
	for _, v := range q.Vertices {
		for _, e := range v.Out {
			if e.Side != "" {
				late = append(late, e.From.ID+"->"+e.To.ID+" "+e.Side)
			}
		}
	}
	if want := []string{"counts->late late"}; !reflect.DeepEqual(late, want) {
		t.Fatalf("side edges %q, want %q", late, want)
	}
}
