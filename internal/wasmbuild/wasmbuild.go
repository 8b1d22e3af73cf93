// Package wasmbuild builds the repository's UDF modules for tests and
// benchmarks with their real toolchains: Go UDFs with the wasip1 reactor
// build mode, WAT UDFs with wat2wasm, C UDFs with clang. Each directory is
// built once per process.
package wasmbuild

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

type built struct {
	once sync.Once
	wasm []byte
	err  error
}

var cache sync.Map // absolute source directory -> *built

// Root is the repository root, found from this file's location.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// UDF builds udfs/<name> and returns the module bytes; it fails tb when the
// toolchain is missing or the build fails.
func UDF(tb testing.TB, name string) []byte {
	tb.Helper()
	return Dir(tb, filepath.Join(Root(), "udfs", name))
}

// Dir builds the module whose sources are in dir.
func Dir(tb testing.TB, dir string) []byte {
	tb.Helper()
	dir, err := filepath.Abs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	v, _ := cache.LoadOrStore(dir, &built{})
	b := v.(*built)
	b.once.Do(func() { b.wasm, b.err = build(dir) })
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.wasm
}

func build(dir string) ([]byte, error) {
	out, err := os.MkdirTemp("", "wasmbuild-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(out)
	target := filepath.Join(out, filepath.Base(dir)+".wasm")
	var cmd *exec.Cmd
	wats, _ := filepath.Glob(filepath.Join(dir, "*.wat"))
	cs, _ := filepath.Glob(filepath.Join(dir, "*.c"))
	switch {
	case len(wats) == 1:
		cmd = exec.Command("wat2wasm", wats[0], "-o", target)
	case len(cs) > 0:
		args := []string{"--target=wasm32-wasi", "-O2", "-mexec-model=reactor", "-o", target}
		cmd = exec.Command("clang", append(args, cs...)...)
	default:
		cmd = exec.Command("go", "build", "-buildmode=c-shared", "-o", target, ".")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	}
	cmd.Dir = dir
	if _, err := exec.LookPath(cmd.Path); err != nil {
		return nil, fmt.Errorf("building %s needs %s (Debian packages wabt, clang, lld, wasi-libc; .ci/run installs them): %w", dir, filepath.Base(cmd.Path), err)
	}
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build %s: %v\n%s", dir, err, msg)
	}
	return os.ReadFile(target)
}
