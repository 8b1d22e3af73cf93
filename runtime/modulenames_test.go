package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"wasmstream.io/platform/internal/wasmbuild"
)

// withCustomSection is wasm with a custom section appended: the same
// functions under another content hash.
func withCustomSection(wasm []byte, name string) []byte {
	section := append(append([]byte{byte(len(name))}, name...), '.')
	return append(append(slices.Clone(wasm), 0, byte(len(section))), section...)
}

// openManager is a manager on dataDir, closed when the test ends.
func openManager(t *testing.T, dataDir string) *Manager {
	t.Helper()
	m, err := NewManager(context.Background(), Config{DataDir: dataDir, Host: newTestHost(t), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m
}

const namedJob = `name: named
sources: [{id: gen, generator: {kind: sequence, rate: 1000}}]
operators: [{id: up, input: gen, map: {module: %s, function: upper}}]
sinks: [{id: out, input: up, discard: true}]
`

// TestModuleNames: uploads under a name make its versions, a spec may name
// a module by name (latest at submission) or name@version, the job keeps
// the id it resolved to, names survive a restart, and deleting a version
// never lets its number be taken again.
func TestModuleNames(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m := openManager(t, dir)
	v1Wasm := wasmbuild.UDF(t, "upper-wat")
	v2Wasm := withCustomSection(v1Wasm, "v2")

	v1, err := m.UploadNamedModule(ctx, v1Wasm, "upper")
	if err != nil || v1.Version != "upper@1" || !slices.Equal(v1.Names, []string{"upper@1"}) {
		t.Fatalf("first upload: %+v %v", v1, err)
	}
	again, err := m.UploadNamedModule(ctx, v1Wasm, "upper")
	if err != nil || again.ID != v1.ID || again.Version != "upper@1" || !slices.Equal(again.Names, []string{"upper@1"}) {
		t.Fatalf("the same bytes again: %+v %v", again, err)
	}
	v2, err := m.UploadNamedModule(ctx, v2Wasm, "upper")
	if err != nil || v2.ID == v1.ID || v2.Version != "upper@2" || !slices.Equal(v2.Names, []string{"upper@2"}) {
		t.Fatalf("second version: %+v %v", v2, err)
	}
	if other, err := m.UploadNamedModule(ctx, v2Wasm, "shout"); err != nil || other.Version != "shout@1" || !slices.Equal(other.Names, []string{"shout@1", "upper@2"}) {
		t.Fatalf("another name for v2: %+v %v", other, err)
	}
	if plain, err := m.UploadModule(ctx, v1Wasm); err != nil || plain.Version != "" || !slices.Equal(plain.Names, []string{"upper@1"}) {
		t.Fatalf("upload without a name: %+v %v", plain, err)
	}
	for _, bad := range []string{"Upper", "-x", "a.b", "a@1", strings.Repeat("a", 64)} {
		_, err := m.UploadNamedModule(ctx, v1Wasm, bad)
		want := fmt.Sprintf("invalid module name %q: want a lowercase letter or digit, then at most 62 lowercase letters, digits, '_' or '-'", bad)
		if !errors.Is(err, ErrInvalidModuleName) || err.Error() != want {
			t.Errorf("name %q: %v, want %s", bad, err, want)
		}
	}

	for ref, want := range map[string][2]string{
		"upper": {v2.ID, "upper@2"}, "upper@1": {v1.ID, "upper@1"}, "upper@2": {v2.ID, "upper@2"}, v1.ID: {v1.ID, ""},
	} {
		if info, err := m.GetModule(ctx, ref); err != nil || info.ID != want[0] || info.Version != want[1] {
			t.Errorf("get %s: %s %s %v, want %s %s", ref, info.ID, info.Version, err, want[0], want[1])
		}
	}
	for ref, want := range map[string]string{
		"upper@3": "module upper@3: no such version: not found",
		"nope":    "module nope: no module has this name: not found",
	} {
		if _, err := m.GetModule(ctx, ref); !errors.Is(err, ErrNotFound) || err.Error() != want {
			t.Errorf("get %s: %v, want %s", ref, err, want)
		}
	}
	if _, err := m.GetModule(ctx, "upper@01"); !errors.Is(err, ErrInvalidModuleName) {
		t.Errorf("get upper@01: %v", err)
	}
	list, err := m.ListModules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names [][]string
	for _, info := range list {
		names = append(names, info.Names)
	}
	if want := [][]string{{"upper@1"}, {"shout@1", "upper@2"}}; fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("listed names %v, want %v", names, want)
	}

	// Jobs resolve names at submission and record the ids.
	latest, err := m.SubmitJob(ctx, fmt.Appendf(nil, namedJob, "upper"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []JobModule{{Ref: "upper", ID: v2.ID, Version: "upper@2"}}; !slices.Equal(latest.Modules, want) {
		t.Errorf("job modules %+v, want %+v", latest.Modules, want)
	}
	pinned, err := m.SubmitJob(ctx, fmt.Appendf(nil, namedJob, "upper@1"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []JobModule{{Ref: "upper@1", ID: v1.ID, Version: "upper@1"}}; !slices.Equal(pinned.Modules, want) {
		t.Errorf("job modules %+v, want %+v", pinned.Modules, want)
	}
	if info, _ := m.GetModule(ctx, "upper@1"); !slices.Equal(info.UsedBy, []string{pinned.ID}) {
		t.Errorf("upper@1 used by %v, want %s", info.UsedBy, pinned.ID)
	}
	spec, ctype, err := m.JobSpec(ctx, pinned.ID)
	if err != nil || string(spec) != fmt.Sprintf(namedJob, "upper@1") || ctype != "application/yaml" {
		t.Errorf("spec: %q %s %v", spec, ctype, err)
	}
	for ref, want := range map[string]string{
		"nope":    `invalid job: operators[0].map.module: no module is named "nope" (upload one with: platform module push FILE.wasm --name nope)`,
		"upper@7": `invalid job: operators[0].map.module: module upper has no version 7 (it has upper@1, upper@2)`,
	} {
		_, err := m.ValidateJob(ctx, fmt.Appendf(nil, namedJob, ref), "", false)
		var je *JobError
		if !errors.As(err, &je) || err.Error() != want || len(je.Problems) != 1 || je.Problems[0].Path != "operators[0].map.module" || je.Problems[0].Line != 3 {
			t.Errorf("module %s: %v (%+v), want %s", ref, err, je, want)
		}
	}

	// Deleting: a bare name is refused, a version in use too.
	if err := m.DeleteModule(ctx, "upper"); !errors.Is(err, ErrInvalidModuleName) ||
		err.Error() != `invalid module name "upper": name a version to delete (upper@N; platform module list shows them) or the module's id` {
		t.Errorf("delete by bare name: %v", err)
	}
	if err := m.DeleteModule(ctx, "upper@1"); !errors.Is(err, ErrInUse) || err.Error() != "module upper@1 is used by jobs "+pinned.ID+": in use" {
		t.Errorf("delete in use: %v", err)
	}
	for _, id := range []string{latest.ID, pinned.ID} {
		if _, err := m.CancelJob(ctx, id); err != nil {
			t.Fatal(err)
		}
	}

	// The names outlive the process.
	m2 := openManager(t, dir)
	if info, err := m2.GetModule(ctx, "upper"); err != nil || info.ID != v2.ID || !slices.Equal(info.Names, []string{"shout@1", "upper@2"}) {
		t.Errorf("after a restart: %+v %v", info, err)
	}
	if err := m2.DeleteModule(ctx, "upper@1"); err != nil {
		t.Fatal(err)
	}
	if _, err := m2.GetModule(ctx, v1.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted module: %v", err)
	}
	v3, err := m2.UploadNamedModule(ctx, v1Wasm, "upper")
	if err != nil || v3.ID != v1.ID || v3.Version != "upper@3" {
		t.Errorf("the deleted bytes again: %+v %v, want upper@3", v3, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "modules", "names.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Names map[string]struct {
			Next     int `json:"next"`
			Versions []struct {
				Version int    `json:"version"`
				ID      string `json:"id"`
			} `json:"versions"`
		} `json:"names"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(idx.Names["upper"].Next, idx.Names["upper"].Versions, idx.Names["shout"].Next, idx.Names["shout"].Versions)
	if want := fmt.Sprint(4, []any{struct {
		Version int
		ID      string
	}{2, v2.ID}, struct {
		Version int
		ID      string
	}{3, v1.ID}}, 2, []any{struct {
		Version int
		ID      string
	}{1, v2.ID}}); got != want {
		t.Errorf("names.json holds %s, want %s", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "modules", "names.json.tmp")); !os.IsNotExist(err) {
		t.Errorf("a temporary file is left: %v", err)
	}
}

// TestResumedJobKeepsItsModule: a job submitted with a module name resumes
// after a restart with the id it resolved to, though the name has a newer
// version by then.
func TestResumedJobKeepsItsModule(t *testing.T) {
	ctx := context.Background()
	js := newTestJetStream(t)
	dir, h := t.TempDir(), newTestHost(t)
	open := func() *Manager {
		m, err := NewManager(ctx, Config{DataDir: dir, Host: h, JetStream: js, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Close(context.Background()) })
		return m
	}
	m := open()
	wasm := wasmbuild.UDF(t, "upper-wat")
	v1, err := m.UploadNamedModule(ctx, wasm, "upper")
	if err != nil {
		t.Fatal(err)
	}
	info, err := m.SubmitJob(ctx, fmt.Appendf(nil, namedJob, "upper"))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	m = open()
	if v2, err := m.UploadNamedModule(ctx, withCustomSection(wasm, "v2"), "upper"); err != nil || v2.Version != "upper@2" {
		t.Fatalf("v2: %+v %v", v2, err)
	}
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	m = open()
	got, err := m.GetJob(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := []JobModule{{Ref: "upper", ID: v1.ID, Version: "upper@1"}}; got.State.Terminal() || !slices.Equal(got.Modules, want) {
		t.Errorf("resumed job: %s %+v, want running with %+v", got.State, got.Modules, want)
	}
	if mod, _ := m.GetModule(ctx, "upper@1"); !slices.Equal(mod.UsedBy, []string{info.ID}) {
		t.Errorf("upper@1 used by %v", mod.UsedBy)
	}
}
