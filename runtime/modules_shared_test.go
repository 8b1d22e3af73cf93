package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
)

// worker is one platform process of a cluster: a manager with its own
// data directory and host on a JetStream it shares with others.
type worker struct {
	*Manager
	dir string
}

// newWorker starts a worker on js with shared modules, closed when the
// test ends.
func newWorker(t *testing.T, js jetstream.JetStream) worker {
	t.Helper()
	dir := t.TempDir()
	m, err := NewManager(context.Background(), Config{
		DataDir: dir, Host: newTestHost(t), JetStream: js, SharedModules: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return worker{Manager: m, dir: dir}
}

// cached lists the files of a worker's module cache.
func (w worker) cached(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(w.dir, "modules"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// moduleIDOf is the id of a module's bytes.
func moduleIDOf(wasm []byte) string {
	sum := sha256.Sum256(wasm)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// cacheFile is the name of a module's file in the cache.
func cacheFile(id string) string {
	return id[len("sha256:"):] + ".wasm"
}

func mustList(t *testing.T, m *Manager) []ModuleInfo {
	t.Helper()
	list, err := m.ListModules(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// TestSharedModulesAcrossWorkers: what one worker uploads, another lists,
// describes and resolves alike, fetching it into its cache, and runs a job
// with; an upload of bytes the store has is a no-op; a worker that joins
// later sees the same.
func TestSharedModulesAcrossWorkers(t *testing.T) {
	ctx := context.Background()
	js := newTestJetStream(t)
	a, b := newWorker(t, js), newWorker(t, js)
	v1Wasm := wasmbuild.UDF(t, "upper-wat")
	v2Wasm, plainWasm := withCustomSection(v1Wasm, "v2"), withCustomSection(v1Wasm, "plain")

	v1, err := a.UploadNamedModule(ctx, v1Wasm, "upper")
	if err != nil || v1.Version != "upper@1" {
		t.Fatalf("v1: %+v %v", v1, err)
	}
	v2, err := a.UploadNamedModule(ctx, v2Wasm, "upper")
	if err != nil || v2.Version != "upper@2" || !slices.Equal(v2.Names, []string{"upper@2"}) {
		t.Fatalf("v2: %+v %v", v2, err)
	}
	plain, err := a.UploadModule(ctx, plainWasm)
	if err != nil || plain.Names != nil {
		t.Fatalf("plain: %+v %v", plain, err)
	}
	if got := b.cached(t); len(got) != 0 {
		t.Fatalf("b's cache before it needs a module: %v", got)
	}

	listA, listB := mustList(t, a.Manager), mustList(t, b.Manager)
	if !reflect.DeepEqual(listA, listB) {
		t.Fatalf("listings differ:\na %+v\nb %+v", listA, listB)
	}
	var ids []string
	for _, info := range listB {
		ids = append(ids, info.ID)
	}
	if want := []string{v1.ID, v2.ID, plain.ID}; !slices.Equal(ids, want) {
		t.Fatalf("listed %v, want %v by upload time", ids, want)
	}
	if want := []string{cacheFile(v1.ID), cacheFile(v2.ID), cacheFile(plain.ID)}; !slices.Equal(sorted(b.cached(t)), sorted(want)) {
		t.Errorf("b's cache after listing: %v, want %v", b.cached(t), want)
	}

	sizes := map[string]int{v1.ID: len(v1Wasm), v2.ID: len(v2Wasm), plain.ID: len(plainWasm)}
	for _, tt := range []struct {
		ref, id, version string
		names            []string
	}{
		{"upper", v2.ID, "upper@2", []string{"upper@2"}},
		{"upper@1", v1.ID, "upper@1", []string{"upper@1"}},
		{"upper@2", v2.ID, "upper@2", []string{"upper@2"}},
		{plain.ID, plain.ID, "", nil},
	} {
		ga, errA := a.GetModule(ctx, tt.ref)
		gb, errB := b.GetModule(ctx, tt.ref)
		if errA != nil || errB != nil || !reflect.DeepEqual(ga, gb) {
			t.Errorf("get %s: a %+v %v, b %+v %v", tt.ref, ga, errA, gb, errB)
		}
		if gb.ID != tt.id || gb.Version != tt.version || !slices.Equal(gb.Names, tt.names) || gb.Size != sizes[tt.id] {
			t.Errorf("get %s on b: %s %s %v size %d, want %s %s %v", tt.ref, gb.ID, gb.Version, gb.Names, gb.Size, tt.id, tt.version, tt.names)
		}
		if id, err := b.ResolveModule(tt.ref); err != nil || id != tt.id {
			t.Errorf("resolve %s on b: %s %v, want %s", tt.ref, id, err, tt.id)
		}
	}
	for ref, want := range map[string]string{
		"upper@3":                      "module upper@3: no such version: not found",
		"nope":                         "module nope: no module has this name: not found",
		moduleIDOf([]byte("not here")): "module " + moduleIDOf([]byte("not here")) + ": not found",
		"sha256:../../etc/passwd":      "module sha256:../../etc/passwd: not found",
	} {
		if _, err := b.GetModule(ctx, ref); !errors.Is(err, ErrNotFound) || err.Error() != want {
			t.Errorf("get %s on b: %v, want %s", ref, err, want)
		}
	}

	// The same bytes again, through the other worker: nothing new.
	again, err := b.UploadNamedModule(ctx, v2Wasm, "upper")
	if err != nil || !reflect.DeepEqual(again, withVersion(listA[1], "upper@2")) {
		t.Errorf("v2 again on b: %+v %v, want %+v", again, err, withVersion(listA[1], "upper@2"))
	}
	if got := mustList(t, a.Manager); !reflect.DeepEqual(got, listA) {
		t.Errorf("a lists after the no-op upload %+v, want %+v", got, listA)
	}

	// A job on b runs the module uploaded on a.
	info := runJob(t, b.Manager, fmt.Sprintf(`
name: shared
sources: [{id: gen, generator: {kind: sequence, count: 1000}}]
operators: [{id: up, input: gen, map: {module: %s, function: upper}}]
sinks: [{id: out, input: up, discard: true}]
`, "upper"))
	if up := vertexInfo(info, "up"); up.RecordsIn != 1000 || up.RecordsOut != 1000 {
		t.Errorf("job on b: %+v", info.Vertices)
	}
	if want := []JobModule{{Ref: "upper", ID: v2.ID, Version: "upper@2"}}; !slices.Equal(info.Modules, want) {
		t.Errorf("job modules %+v, want %+v", info.Modules, want)
	}

	// A worker joining later, with an empty data directory, sees the same.
	c := newWorker(t, js)
	if got := mustList(t, c.Manager); !reflect.DeepEqual(got, listA) {
		t.Errorf("a new worker lists %+v, want %+v", got, listA)
	}
}

func withVersion(info ModuleInfo, version string) ModuleInfo {
	info.Version = version
	return info
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

// TestSharedModuleNamesConcurrently: versions of one name uploaded at once
// through two workers are all kept, each under its own number; the same
// bytes uploaded at once make one version.
func TestSharedModuleNamesConcurrently(t *testing.T) {
	ctx := context.Background()
	js := newTestJetStream(t)
	workers := []worker{newWorker(t, js), newWorker(t, js)}
	base := wasmbuild.UDF(t, "upper-wat")
	const uploads = 8
	var wg sync.WaitGroup
	versions := make([]string, uploads)
	ids := make([]string, uploads)
	errs := make([]error, uploads)
	same := make([]string, uploads)
	sameErrs := make([]error, uploads)
	for i := range uploads {
		wg.Go(func() {
			w := workers[i%len(workers)]
			info, err := w.UploadNamedModule(ctx, withCustomSection(base, fmt.Sprint("v", i)), "busy")
			versions[i], ids[i], errs[i] = info.Version, info.ID, err
			info, err = w.UploadNamedModule(ctx, base, "same")
			same[i], sameErrs[i] = info.Version, err
		})
	}
	wg.Wait()
	for i := range uploads {
		if errs[i] != nil || sameErrs[i] != nil {
			t.Fatalf("upload %d: %v %v", i, errs[i], sameErrs[i])
		}
		if want := moduleIDOf(withCustomSection(base, fmt.Sprint("v", i))); ids[i] != want {
			t.Fatalf("upload %d: id %s, want %s", i, ids[i], want)
		}
		if same[i] != "same@1" {
			t.Errorf("the same bytes, upload %d: %s, want same@1", i, same[i])
		}
	}
	var want []string
	for v := range uploads {
		want = append(want, fmt.Sprint("busy@", v+1))
	}
	if !slices.Equal(sorted(versions), sorted(want)) {
		t.Fatalf("versions made %v, want each of %v once", versions, want)
	}
	for _, w := range workers {
		for i, version := range versions {
			info, err := w.GetModule(ctx, version)
			if err != nil || info.ID != ids[i] || !slices.Equal(info.Names, []string{version}) {
				t.Errorf("get %s: %s %v %v, want %s [%s]", version, info.ID, info.Names, err, ids[i], version)
			}
		}
		if _, err := w.GetModule(ctx, fmt.Sprint("busy@", uploads+1)); !errors.Is(err, ErrNotFound) {
			t.Errorf("busy@%d: %v", uploads+1, err)
		}
		if info, err := w.GetModule(ctx, "same"); err != nil || info.ID != moduleIDOf(base) || !slices.Equal(info.Names, []string{"same@1"}) {
			t.Errorf("same: %+v %v", info, err)
		}
	}
	if a, b := mustList(t, workers[0].Manager), mustList(t, workers[1].Manager); !reflect.DeepEqual(a, b) || len(a) != uploads+1 {
		t.Errorf("listings: %d and %d modules, equal %v; want %d each, equal", len(a), len(b), reflect.DeepEqual(a, b), uploads+1)
	}
}

// TestSharedModuleDelete: a delete through one worker removes the module
// from every worker, with its versions, whose numbers are not given again;
// a module a job runs on another worker is refused.
func TestSharedModuleDelete(t *testing.T) {
	ctx := context.Background()
	js := newTestJetStream(t)
	a, b := newWorker(t, js), newWorker(t, js)
	wasm := wasmbuild.UDF(t, "upper-wat")
	v1, err := a.UploadNamedModule(ctx, wasm, "upper")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.GetModule(ctx, v1.ID); err != nil {
		t.Fatal(err)
	}

	job, err := a.SubmitJob(ctx, fmt.Appendf(nil, namedJob, "upper"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []worker{a, b} {
		if info, err := w.GetModule(ctx, "upper@1"); err != nil || !slices.Equal(info.UsedBy, []string{job.ID}) {
			t.Errorf("used by %v %v, want [%s]", info.UsedBy, err, job.ID)
		}
	}
	for _, ref := range []string{"upper@1", v1.ID} {
		if err := b.DeleteModule(ctx, ref); !errors.Is(err, ErrInUse) || err.Error() != "module "+ref+" is used by jobs "+job.ID+": in use" {
			t.Errorf("delete %s on b while a runs a job with it: %v", ref, err)
		}
	}
	if err := b.DeleteModule(ctx, "upper"); !errors.Is(err, ErrInvalidModuleName) {
		t.Errorf("delete by bare name: %v", err)
	}
	if _, err := a.CancelJob(ctx, job.ID); err != nil {
		t.Fatal(err)
	}

	if err := b.DeleteModule(ctx, "upper@1"); err != nil {
		t.Fatalf("delete on b after the job ended: %v", err)
	}
	for name, w := range map[string]worker{"a": a, "b": b} {
		if list := mustList(t, w.Manager); len(list) != 0 {
			t.Errorf("%s lists %+v after the delete", name, list)
		}
		want := map[string]string{
			v1.ID:   "module " + v1.ID + ": not found",
			"upper": "module upper: no module has this name: not found",
		}
		for ref, msg := range want {
			if _, err := w.GetModule(ctx, ref); !errors.Is(err, ErrNotFound) || err.Error() != msg {
				t.Errorf("%s: get %s: %v, want %s", name, ref, err, msg)
			}
		}
		if got := w.cached(t); len(got) != 0 {
			t.Errorf("%s still caches %v", name, got)
		}
		if _, err := w.ValidateJob(ctx, fmt.Appendf(nil, namedJob, v1.ID), "", false); !errors.Is(err, ErrInvalidJob) {
			t.Errorf("%s: a job with the deleted module: %v", name, err)
		}
	}
	if err := a.DeleteModule(ctx, v1.ID); !errors.Is(err, ErrNotFound) || err.Error() != "module "+v1.ID+": not found" {
		t.Errorf("delete again on a: %v", err)
	}
	if again, err := a.UploadNamedModule(ctx, wasm, "upper"); err != nil || again.Version != "upper@2" {
		t.Errorf("the deleted bytes again on a: %+v %v, want upper@2", again, err)
	}
}

// TestSharedModuleCorrupt: an object whose bytes are not its id's is a
// clear error naming the module on every worker, whether or not it has
// the module; it stays out of the caches; uploading the module's bytes
// again repairs it, and a corrupt module can be deleted.
func TestSharedModuleCorrupt(t *testing.T) {
	ctx := context.Background()
	js := newTestJetStream(t)
	a, b := newWorker(t, js), newWorker(t, js)
	good := wasmbuild.UDF(t, "upper-wat")
	wasm := withCustomSection(good, "victim")
	id := moduleIDOf(wasm)
	if _, err := a.UploadNamedModule(ctx, wasm, "victim"); err != nil {
		t.Fatal(err)
	}
	obs, err := js.ObjectStore(ctx, modulesBucket)
	if err != nil {
		t.Fatal(err)
	}
	corrupt := func() {
		t.Helper()
		if _, err := obs.PutBytes(ctx, id, good); err != nil {
			t.Fatal(err)
		}
	}
	corrupt()

	why := "module " + id + ": corrupt module: the shared store's copy hashes to " + moduleIDOf(good) + " (upload the module again to repair it, or delete it)"
	ops := []struct {
		name string
		do   func(m *Manager) error
		want string
	}{
		{"get by id", func(m *Manager) error { _, err := m.GetModule(ctx, id); return err }, why},
		{"get by name", func(m *Manager) error { _, err := m.GetModule(ctx, "victim"); return err }, "victim@1: " + why},
		{"resolve", func(m *Manager) error { _, err := m.ResolveModule(id); return err }, why},
		{"list", func(m *Manager) error { _, err := m.ListModules(ctx); return err }, why},
		{"submit", func(m *Manager) error { _, err := m.SubmitJob(ctx, fmt.Appendf(nil, namedJob, "victim")); return err },
			"invalid job: operators[0].map.module: victim@1: " + why},
		{"submit by id", func(m *Manager) error { _, err := m.SubmitJob(ctx, fmt.Appendf(nil, namedJob, id)); return err },
			"invalid job: operators[0].map.module: " + why},
	}
	for _, w := range []struct {
		name string
		worker
	}{{"a, which uploaded it", a}, {"b, which never had it", b}} {
		for _, op := range ops {
			err := op.do(w.Manager)
			if err == nil || err.Error() != op.want {
				t.Errorf("%s: %s: %v, want %s", w.name, op.name, err, op.want)
			}
			if op.name != "submit" && op.name != "submit by id" && !errors.Is(err, ErrCorruptModule) {
				t.Errorf("%s: %s: %v is not ErrCorruptModule", w.name, op.name, err)
			}
		}
	}
	if got := b.cached(t); len(got) != 0 {
		t.Errorf("b caches %v", got)
	}

	// The module's bytes again repair it.
	if _, err := a.UploadModule(ctx, wasm); err != nil {
		t.Fatal(err)
	}
	if info, err := b.GetModule(ctx, "victim"); err != nil || info.ID != id {
		t.Fatalf("after the repair: %+v %v", info, err)
	}
	if got := b.cached(t); !slices.Equal(got, []string{cacheFile(id)}) {
		t.Errorf("b caches %v, want %s", got, cacheFile(id))
	}

	// A corrupt module can be deleted.
	corrupt()
	if err := b.DeleteModule(ctx, "victim@1"); err != nil {
		t.Fatalf("delete the corrupt module: %v", err)
	}
	if list, err := a.ListModules(ctx); err != nil || len(list) != 0 {
		t.Errorf("after the delete: %+v %v", list, err)
	}
}

// TestSharedModulesConfig: cluster mode needs JetStream; without it,
// workers on one JetStream keep their modules to themselves and make no
// buckets.
func TestSharedModulesConfig(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	_, err := NewManager(ctx, Config{DataDir: t.TempDir(), Host: newTestHost(t), SharedModules: true, Logger: quiet})
	if want := "shared modules: no JetStream: cluster mode keeps modules in JetStream"; err == nil || err.Error() != want {
		t.Errorf("shared modules without JetStream: %v, want %s", err, want)
	}

	js := newTestJetStream(t)
	open := func() *Manager {
		m, err := NewManager(ctx, Config{DataDir: t.TempDir(), Host: newTestHost(t), JetStream: js, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Close(context.Background()) })
		return m
	}
	a, b := open(), open()
	info, err := a.UploadNamedModule(ctx, wasmbuild.UDF(t, "upper-wat"), "upper")
	if err != nil {
		t.Fatal(err)
	}
	if list := mustList(t, a); len(list) != 1 || list[0].ID != info.ID {
		t.Errorf("a lists %+v", list)
	}
	if list := mustList(t, b); len(list) != 0 {
		t.Errorf("b lists %+v, want nothing", list)
	}
	for _, ref := range []string{info.ID, "upper"} {
		if _, err := b.GetModule(ctx, ref); !errors.Is(err, ErrNotFound) {
			t.Errorf("b: get %s: %v, want not found", ref, err)
		}
	}
	if _, err := js.ObjectStore(ctx, modulesBucket); !errors.Is(err, jetstream.ErrBucketNotFound) {
		t.Errorf("bucket %s: %v, want none", modulesBucket, err)
	}
	if _, err := js.KeyValue(ctx, moduleNamesBucket); !errors.Is(err, jetstream.ErrBucketNotFound) {
		t.Errorf("bucket %s: %v, want none", moduleNamesBucket, err)
	}
}
