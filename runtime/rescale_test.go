package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"wasmstream.io/platform/internal/wasmbuild"
)

// A running job rescaled 2 -> 4 -> 1 in place keeps its id, its keyed
// state and its windows, and writes exactly what it would have written
// unrescaled.
func TestRescaleInPlace(t *testing.T) {
	p := newUpgradePlatform(t)
	ctx := context.Background()
	mod := p.upload(wasmbuild.UDF(t, "dedup-wat"))
	p.publish(0, 12, 1000, 2000, 3000)
	job, err := p.m.SubmitJob(ctx, []byte(upgradeSpec(mod, 2, "fail")))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first outputs", func() bool { return running(t, p.m, job.ID) && len(p.firsts()) == 12 })
	steps := []struct {
		req  RescaleRequest
		want map[string]int
		ts   int64
	}{
		{RescaleRequest{Parallelism: 4}, map[string]int{"in": 1, "dedup": 4, "counts": 4, "firsts": 4, "windows": 4}, 4000},
		{RescaleRequest{Parallelism: 1, Operators: map[string]int{"windows": 2}}, map[string]int{"in": 1, "dedup": 1, "counts": 1, "firsts": 1, "windows": 2}, 5000},
	}
	outcomes := []string{VersionRunning}
	for i, s := range steps {
		sw, err := p.m.RescaleJob(ctx, job.ID, s.req)
		if err != nil {
			t.Fatalf("rescale %d: %v", i, err)
		}
		outcomes[len(outcomes)-1] = VersionReplaced
		outcomes = append(outcomes, VersionRunning)
		info := p.versions(job.ID, outcomes...)
		for _, v := range info.Vertices {
			if v.Parallelism != s.want[v.ID] {
				t.Fatalf("rescale %d: %s runs at %d, want %d", i, v.ID, v.Parallelism, s.want[v.ID])
			}
		}
		if last := info.Versions[len(info.Versions)-1]; last.Change != changeRescale || last.FromCheckpoint != sw.FromCheckpoint || !mapsEqual(last.Parallelism, s.want) {
			t.Fatalf("rescale %d: version %+v, want a rescale from %d at %v", i, last, sw.FromCheckpoint, s.want)
		}
		p.publish(0, 16, s.ts)
	}
	p.finish(job.ID, 17, 16)
	if got, want := p.firsts(), wantFirsts(12, 16); !slices.Equal(got, want) {
		t.Fatalf("dedup output %q, want %q", got, want)
	}
	if got, want := p.windows(), wantWindows(12, 16); !mapsEqual(got, want) {
		t.Fatalf("window counts %v, want %v", got, want)
	}
}

func TestRescaledSpec(t *testing.T) {
	const yamlSpec = "name: x # the job\nsources: [{id: in, generator: {kind: sequence}}]\noperators:\n  - id: up\n    parallelism: 3\n    input: in\n"
	tests := []struct {
		name, spec string
		req        RescaleRequest
		want       string // a part of the new spec, or of the error
		err        bool
	}{
		{"job default", yamlSpec, RescaleRequest{Parallelism: 4}, "parallelism: 4", false},
		{"keeps comments", yamlSpec, RescaleRequest{Parallelism: 4}, "# the job", false},
		{"operator", yamlSpec, RescaleRequest{Operators: map[string]int{"up": 5}}, "parallelism: 5", false},
		{"source", yamlSpec, RescaleRequest{Operators: map[string]int{"in": 2}}, "parallelism: 2", false},
		{"json stays json", `{"name": "x", "operators": [{"id": "up"}]}`, RescaleRequest{Operators: map[string]int{"up": 2}}, `"parallelism": 2`, false},
		{"unknown operator", yamlSpec, RescaleRequest{Operators: map[string]int{"nope": 2}}, `operators.nope: the job has no source, operator or sink "nope"`, true},
		{"zero", yamlSpec, RescaleRequest{Operators: map[string]int{"up": 0}}, "operators.up: parallelism 0", true},
		{"nothing", yamlSpec, RescaleRequest{}, "parallelism: give a parallelism", true},
		{"not a mapping", "- a\n- b\n", RescaleRequest{Parallelism: 2}, "does not read as a mapping", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rescaledSpec([]byte(tc.spec), tc.req)
			if tc.err {
				if !errors.Is(err, ErrInvalidJob) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil || !strings.Contains(string(got), tc.want) {
				t.Fatalf("spec %s (%v), want it to hold %q", got, err, tc.want)
			}
		})
	}
}

// A job starts from a retained checkpoint of another, not only from a
// savepoint: its keyed state and windows go on, and from_savepoint still
// refuses a checkpoint.
func TestSubmitFromCheckpoint(t *testing.T) {
	p := newUpgradePlatform(t)
	ctx := context.Background()
	mod := p.upload(wasmbuild.UDF(t, "dedup-wat"))
	spec := []byte(upgradeSpec(mod, 2, "fail"))
	p.publish(0, 12, 1000, 2000, 3000)
	first, err := p.m.SubmitJob(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first outputs", func() bool { return running(t, p.m, first.ID) && len(p.firsts()) == 12 })
	// A checkpoint taken after the outputs holds all of them.
	var after int64
	waitFor(t, "a checkpoint", func() bool {
		info, _ := p.m.GetJob(ctx, first.ID)
		if info.Checkpoint == nil || info.Checkpoint.Latest == nil {
			return false
		}
		if after == 0 {
			after = info.Checkpoint.Latest.ID
		}
		return info.Checkpoint.Latest.ID > after
	})
	if _, err := p.m.CancelJob(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	info, _ := p.m.WaitJob(ctx, first.ID)
	ref := fmt.Sprintf("%s-%d", first.ID, info.Checkpoint.Latest.ID)
	for _, tc := range []struct{ from, want string }{
		{ref, "is a checkpoint, not a savepoint"},
		{FromCheckpoint(first.ID + "-999"), "from_checkpoint: " + first.ID + "-999: no such checkpoint"},
		{FromCheckpoint("nonsense"), "from_checkpoint: savepoint id"},
	} {
		if _, err := p.m.SubmitJobFromSavepoint(ctx, spec, tc.from, false); !errors.Is(err, ErrInvalidJob) || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("from %s: %v, want an invalid job with %q", tc.from, err, tc.want)
		}
	}
	second, err := p.m.SubmitJobFromSavepoint(ctx, spec, FromCheckpoint(ref), false)
	if err != nil {
		t.Fatal(err)
	}
	p.publish(0, 16, 4000, 5000)
	p.finish(second.ID, 17, 16)
	if got, want := p.firsts(), wantFirsts(12, 16); !slices.Equal(got, want) {
		t.Fatalf("dedup output %q, want %q", got, want)
	}
	if got, want := p.windows(), wantWindows(12, 16); !mapsEqual(got, want) {
		t.Fatalf("window counts %v, want %v", got, want)
	}
}

// FuzzRescaledSpec: any spec text either is refused as an invalid job or
// becomes a spec that reads back with the parallelism asked for.
func FuzzRescaledSpec(f *testing.F) {
	f.Add([]byte("name: x\nparallelism: 3\noperators: [{id: up, parallelism: 2}]\n"), 4, "up", 2)
	f.Add([]byte(`{"name": "x", "sinks": [{"id": "out"}]}`), 0, "out", 5)
	f.Add([]byte("- a\n"), 2, "", 0)
	f.Add([]byte("{"), 1, "a", 1)
	f.Fuzz(func(t *testing.T, data []byte, p int, id string, n int) {
		req := RescaleRequest{Parallelism: p}
		if id != "" {
			req.Operators = map[string]int{id: n}
		}
		out, err := rescaledSpec(data, req)
		if err != nil {
			if !errors.Is(err, ErrInvalidJob) {
				t.Fatalf("error %v is not an invalid job", err)
			}
			return
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(out, &doc); err != nil || len(doc.Content) != 1 {
			t.Fatalf("rescaled spec %q does not read back: %v", out, err)
		}
		root := doc.Content[0]
		if p > 0 {
			if v := mapValue(root, "parallelism"); v == nil || v.Value != strconv.Itoa(p) {
				t.Fatalf("rescaled spec %q: parallelism %v, want %d", out, v, p)
			}
		}
		if id != "" {
			if item := findVertex(root, id); item == nil || mapValue(item, "parallelism") == nil || mapValue(item, "parallelism").Value != strconv.Itoa(n) {
				t.Fatalf("rescaled spec %q: %s's parallelism is not %d", out, id, n)
			}
		}
	})
}
