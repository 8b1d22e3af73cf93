package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/spec"
	"wasmstream.io/platform/state"
)

const testModule = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

var testDescription = abi.Description{ABI: 1, Functions: []abi.Function{
	{Name: "parse", Kind: abi.KindMap},
	{Name: "user", Kind: abi.KindKey},
	{Name: "dedup", Kind: abi.KindProcess},
	{Name: "fire", Kind: abi.KindOnTimer},
	{Name: "pairs", Kind: abi.KindJoin},
}, States: []abi.State{{Name: "seen", Kind: "value"}}}

func lookup(id string) (abi.Description, bool) { return testDescription, id == testModule }

// testJob has every kind of edge: a chained map, a hash edge by field and
// by function, a window with a late output, a keyed process function, a
// window join and a rebalance to a sink of another parallelism.
const testJob = `
name: shapes
parallelism: 2
max_parallelism: 16
sources:
  - {id: clicks, generator: {kind: clicks, count: 10}}
  - {id: views, generator: {kind: clicks, count: 10}, parallelism: 1}
operators:
  - {id: parse, input: clicks, map: {module: "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", function: parse}}
  - id: counts
    input: parse
    key_by: {field: user}
    window: {type: tumbling, size: 1s}
    aggregate: {builtin: count}
    late_output: late
  - id: first
    input: parse
    key_by: {module: "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", function: user}
    process: {module: "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", function: dedup}
    on_timer: fire
  - id: joined
    join:
      left: {input: parse, key_by: {field: ad}}
      right: {input: views, key_by: {field: ad}}
      window: {type: tumbling, size: 1s}
      function: {module: "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", function: pairs}
sinks:
  - {id: out, input: counts, discard: true, parallelism: 3}
  - {id: late, discard: true}
  - {id: firsts, input: first, discard: true}
  - {id: pairs, input: joined, discard: true}
`

func build(t *testing.T, text string) *Plan {
	t.Helper()
	j, err := spec.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(j, lookup)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// shape describes a plan's graph in one string per edge.
func shape(p *Plan) []string {
	var out []string
	for _, v := range p.Vertices {
		for _, e := range v.Out {
			s := e.From.ID + "->" + e.To.ID + " " + e.Ship.String()
			if e.Chained() {
				s += " chained"
			}
			if e.Side != "" {
				s += " side=" + e.Side
			}
			if e.KeyFn != nil {
				s += " key_fn=" + e.KeyFn.Function
			}
			out = append(out, s)
		}
	}
	return out
}

func TestBuildShape(t *testing.T) {
	p := build(t, testJob)
	want := []string{
		"clicks->parse forward chained",
		"views->joined hash",
		"parse->counts hash",
		"parse->first hash key_fn=user",
		"parse->joined hash",
		"counts->out rebalance",
		"counts->late forward chained side=late",
		"first->firsts forward chained",
		"joined->pairs forward chained",
	}
	if got := shape(p); !reflect.DeepEqual(got, want) {
		t.Fatalf("edges\n got %q\nwant %q", got, want)
	}
	if got := p.ModuleIDs(); !reflect.DeepEqual(got, []string{testModule}) {
		t.Fatalf("modules %v", got)
	}
	if v := p.Vertex("first"); v.Fn.Function != "dedup" || v.Fn.Index != 2 || v.OnTimer.Index != 3 {
		t.Fatalf("first: fn %+v on_timer %+v", v.Fn, v.OnTimer)
	}
}

func TestSubtasks(t *testing.T) {
	p := build(t, testJob)
	var got []string
	for _, s := range p.Subtasks() {
		got = append(got, fmt.Sprintf("%s[%d] %s %02d-%02d", s.Head, s.Index, strings.Join(s.Chain, ","), s.KeyGroups.First, s.KeyGroups.Last))
	}
	want := []string{
		"clicks[0] clicks,parse 00-07", "clicks[1] clicks,parse 08-15",
		"views[0] views 00-15",
		"counts[0] counts,late 00-07", "counts[1] counts,late 08-15",
		"first[0] first,firsts 00-07", "first[1] first,firsts 08-15",
		"joined[0] joined,pairs 00-07", "joined[1] joined,pairs 08-15",
		"out[0] out 00-05", "out[1] out 06-10", "out[2] out 11-15",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("subtasks\n got %q\nwant %q", got, want)
	}
	// Every key group is owned by exactly one subtask of each chain.
	owners := map[string][]int{}
	for _, s := range p.Subtasks() {
		if owners[s.Head] == nil {
			owners[s.Head] = make([]int, 16)
		}
		for kg := s.KeyGroups.First; kg <= s.KeyGroups.Last; kg++ {
			owners[s.Head][kg]++
		}
	}
	for head, n := range owners {
		for kg, c := range n {
			if c != 1 {
				t.Fatalf("%s: key group %d owned %d times", head, kg, c)
			}
		}
	}
	if r := state.RangeOf(16, 3, 1); p.Subtasks()[10].KeyGroups != r {
		t.Fatalf("out[1] owns %v, want %v", p.Subtasks()[10].KeyGroups, r)
	}
}

func TestPlanJSONRoundTrip(t *testing.T) {
	p := build(t, testJob)
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q Plan
	if err := json.Unmarshal(data, &q); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(shape(&q), shape(p)) {
		t.Fatalf("edges after a round trip\n got %q\nwant %q", shape(&q), shape(p))
	}
	if !reflect.DeepEqual(q.Subtasks(), p.Subtasks()) {
		t.Fatalf("subtasks after a round trip differ")
	}
	for _, v := range p.Vertices {
		w := q.Vertex(v.ID)
		if w == nil || w.Kind != v.Kind || w.Parallelism != v.Parallelism ||
			!reflect.DeepEqual(w.Fn, v.Fn) || !reflect.DeepEqual(w.OnTimer, v.OnTimer) ||
			!reflect.DeepEqual(w.Window, v.Window) || !reflect.DeepEqual(w.Join, v.Join) ||
			(v.Op != nil) != (w.Op != nil) || (v.Source != nil) != (w.Source != nil) || (v.Sink != nil) != (w.Sink != nil) {
			t.Fatalf("vertex %s: got %+v, want %+v", v.ID, w, v)
		}
		if v.Op != nil && w.Op.ID != v.ID || v.Source != nil && w.Source.ID != v.ID || v.Sink != nil && w.Sink.ID != v.ID {
			t.Fatalf("vertex %s linked to the wrong spec", v.ID)
		}
	}
	if !reflect.DeepEqual(q.Modules, p.Modules) {
		t.Fatalf("modules %v, want %v", q.Modules, p.Modules)
	}
	again, err := json.Marshal(&q)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(data) {
		t.Fatalf("second encoding differs:\n%s\n%s", again, data)
	}
}

func TestPlanJSONRefusesBrokenGraphs(t *testing.T) {
	good, err := json.Marshal(build(t, testJob))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, from, to, want string
	}{
		{"unknown vertex", `"id":"parse","kind"`, `"id":"nope","kind"`, `plan: vertex "nope" is not in the job`},
		{"edge to nowhere", `"to":"counts"`, `"to":"gone"`, "plan: edge parse -> gone names a missing vertex"},
		{"no job", `"job":{`, `"jab":{`, "plan: no job"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := strings.Replace(string(good), tt.from, tt.to, 1)
			var p Plan
			err := json.Unmarshal([]byte(bad), &p)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestBuildNamesTheBadField(t *testing.T) {
	tests := []struct {
		name, op, want string
	}{
		{"missing module", `map: {module: "sha256:ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", function: parse}`, "operators[0].map.module: no module sha256:ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff (upload it first)"},
		{"missing function", `map: {module: "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", function: nope}`, `operators[0].map.function: module sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa has no function "nope" (it has parse (map), user (key), dedup (process), fire (on_timer), pairs (join))`},
		{"wrong kind", `map: {module: "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", function: dedup}`, `operators[0].map.function: "dedup" is a process function, want map`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := spec.Parse([]byte("name: bad\nsources: [{id: s, generator: {kind: clicks, count: 1}}]\noperators: [{id: m, input: s, " + tt.op + "}]\nsinks: [{id: o, input: m, discard: true}]\n"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Build(j, lookup)
			if !errors.Is(err, ErrInvalidJob) || err.Error() != "invalid job: "+tt.want {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestGuests counts testJob's instances: parse's map and the user key
// selector in front of first, in each of the 2 parse subtasks; dedup and
// its on_timer in each of the 2 first subtasks; pairs in each of the 2
// joined subtasks. The builtin count and the sinks run no module.
func TestGuests(t *testing.T) {
	if got := build(t, testJob).Guests(); got != 10 {
		t.Fatalf("guests %d, want 10", got)
	}
}
