package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/runtime/spec"
	"wasmstream.io/platform/state"
)

// builtinPlan is a job of built-in operators only: two keyed windows and
// a join.
func builtinPlan(t *testing.T) *plan.Plan {
	t.Helper()
	j, err := spec.Parse([]byte(`
name: shapes
sources:
  - {id: clicks, jetstream: {stream: CLICKS}}
  - {id: views, jetstream: {stream: VIEWS}}
operators:
  - {id: counts, input: clicks, key_by: {field: user}, window: {type: tumbling, size: 1m}, aggregate: {builtin: count}}
  - {id: views_counts, input: views, key_by: {field: user}, window: {type: tumbling, size: 1m}, aggregate: {builtin: count}}
  - id: pairs
    join:
      left: {input: clicks, key_by: {field: ad}}
      right: {input: views, key_by: {field: ad}}
      interval: {lower: -10s, upper: 0s}
sinks:
  - {id: out, input: counts, jetstream: {subject: out}}
  - {id: out2, input: views_counts, jetstream: {subject: out2}}
  - {id: out3, input: pairs, jetstream: {subject: out3}}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(j, func(string) (abi.Description, bool) { return abi.Description{}, false })
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The keyed operator is the one named, or the only one; anything else
// says why not.
func TestFindOperator(t *testing.T) {
	p := builtinPlan(t)
	for _, tc := range []struct {
		name, op string
		want     error
		text     string
	}{
		{"a keyed window", "counts", nil, ""},
		{"a join", "pairs", ErrNotKeyed, `operator "pairs" is a join operator`},
		{"a source", "clicks", ErrBadRequest, `the job has no operator "clicks"`},
		{"unknown", "nope", ErrBadRequest, `the job has no operator "nope"`},
		{"several", "", ErrBadRequest, "several keyed operators (counts, views_counts)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := findOperator(p, tc.op)
			if tc.want == nil {
				if err != nil || v.ID != tc.op {
					t.Fatalf("got %v, %v", v, err)
				}
				r, err := findRoute(v)
				if err != nil || r.source.ID != "clicks" || len(r.steps) != 0 || r.keyBy.KeyField != "user" {
					t.Fatalf("route %+v, %v", r, err)
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("got %v, want %v with %q", err, tc.want, tc.text)
			}
		})
	}
}

// A checkpoint whose keyed snapshots do not cover the key's key group is
// ErrKeyNotInCheckpoint; the one that covers it is the only one opened.
func TestKeyedStateCoversTheKeyGroup(t *testing.T) {
	ctx := context.Background()
	store := checkpoint.NewDirStore(t.TempDir())
	blob := func(r state.Range) checkpoint.Blob {
		k, err := state.Open(state.Config{MaxParallelism: 128, Range: r})
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		s, err := k.Snapshot(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Release()
		var buf bytes.Buffer
		if _, err := s.WriteTo(ctx, &buf); err != nil {
			t.Fatal(err)
		}
		b, err := store.PutBlob(ctx, "job", 7, "keyed~op~0", buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	low := blob(state.Range{First: 0, Last: 63})
	meta := &checkpoint.Metadata{Job: "job", ID: 7, Kind: checkpoint.KindCheckpoint, Blobs: map[string]checkpoint.Blob{low.Name: low}}
	if err := store.Commit(ctx, meta); err != nil {
		t.Fatal(err)
	}
	snap, err := findCheckpoint(ctx, store, "job", 7)
	if err != nil {
		t.Fatal(err)
	}
	op := &plan.Vertex{ID: "op"}
	if srcs, err := snap.keyedState(ctx, op, 128, 10); err != nil || len(srcs) != 1 {
		t.Fatalf("key group 10: %d snapshots, %v", len(srcs), err)
	}
	_, err = snap.keyedState(ctx, op, 128, 100)
	if !errors.Is(err, ErrKeyNotInCheckpoint) || !strings.Contains(err.Error(), `checkpoint 7 has no state of operator "op" for key group 100 (1 snapshots)`) {
		t.Fatalf("key group 100: %v", err)
	}
	if _, err := snap.keyedState(ctx, op, 64, 10); err == nil || !strings.Contains(err.Error(), "max parallelism 128, the job has 64") {
		t.Fatalf("max parallelism: %v", err)
	}
	if _, err := findCheckpoint(ctx, store, "job", 8); !errors.Is(err, ErrUnknownCheckpoint) || !strings.Contains(err.Error(), "job job has checkpoints 7") {
		t.Fatalf("checkpoint 8: %v", err)
	}
}

// Bytes are a JSON string when they are UTF-8 and base64 otherwise, and
// read back either way.
func TestBytesJSON(t *testing.T) {
	for _, tc := range []struct {
		in   Bytes
		json string
	}{
		{Bytes("acct-7"), `"acct-7"`},
		{Bytes{0xff, 0x00}, `{"base64":"/wA="}`},
	} {
		out, err := json.Marshal(tc.in)
		if err != nil || string(out) != tc.json {
			t.Fatalf("%q: %s %v, want %s", tc.in, out, err, tc.json)
		}
		var back Bytes
		if err := json.Unmarshal(out, &back); err != nil || !bytes.Equal(back, tc.in) {
			t.Fatalf("%s: read back %q %v", out, back, err)
		}
	}
	for _, bad := range []string{`1`, `{"base64": 3}`, `{"base64":"%%"}`, `{}`} {
		var b Bytes
		if err := json.Unmarshal([]byte(bad), &b); err == nil {
			t.Fatalf("%s: read as %q", bad, b)
		}
	}
}

// FuzzBytesJSON: whatever JSON is read as Bytes writes back to JSON that
// reads as the same bytes.
func FuzzBytesJSON(f *testing.F) {
	f.Add([]byte(`"x"`))
	f.Add([]byte(`{"base64":"/wA="}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var b Bytes
		if json.Unmarshal(data, &b) != nil {
			return
		}
		out, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		var back Bytes
		if err := json.Unmarshal(out, &back); err != nil || !bytes.Equal(back, b) {
			t.Fatalf("%q -> %s -> %q, %v", b, out, back, err)
		}
	})
}
