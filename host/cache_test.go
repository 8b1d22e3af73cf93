package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// cacheFiles lists the regular files under dir.
func cacheFiles(t *testing.T, dir string) map[string]os.FileInfo {
	t.Helper()
	files := map[string]os.FileInfo{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		files[path] = info
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestCompilationCacheDir(t *testing.T) {
	dir := t.TempDir()
	wasm := fixture(t, "udf")
	ctx := context.Background()

	first, _ := newHost(t, dir)
	if _, err := first.Compile(ctx, wasm); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	before := cacheFiles(t, dir)
	if len(before) == 0 {
		t.Fatalf("no files in the cache dir after Compile")
	}

	second, _ := newHost(t, dir)
	m, err := second.Compile(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newPool(t, m, InstanceConfig{}).Call(ctx, fnUpper, inputFrame(values("x")...)); err != nil {
		t.Fatal(err)
	}
	after := cacheFiles(t, dir)
	if len(after) != len(before) {
		t.Fatalf("cache files %d after the second Host, %d before", len(after), len(before))
	}
	for path, info := range before {
		// A cache miss would have written the file again (a new file
		// renamed over it).
		if !os.SameFile(info, after[path]) {
			t.Fatalf("%s was rewritten: the second Host compiled again", path)
		}
	}
}

func TestCompileReturnsTheSameModule(t *testing.T) {
	h, _ := newHost(t, "")
	wasm := fixture(t, "udf")
	a, err := h.Compile(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.Compile(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatalf("two Compiles of the same bytes gave two modules")
	}
	sum := sha256.Sum256(wasm)
	if want := "sha256:" + hex.EncodeToString(sum[:]); a.ID != want {
		t.Fatalf("id %q, want %q", a.ID, want)
	}
}
