// Package wasmbuild builds the repository's UDF modules for tests and
// benchmarks with their real toolchains: Go UDFs with the wasip1 reactor
// build mode, WAT UDFs with wat2wasm, C UDFs with clang (and the C SDK when
// they include platform_udf.h), Rust UDFs with Debian's cargo (a Cargo.toml)
// or rustc (a lone lib.rs), AssemblyScript UDFs with the SDK's asc (an
// asconfig.json). Each directory is built once per process.
package wasmbuild

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
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
	cmd, built, err := command(dir, target)
	if err != nil {
		return nil, err
	}
	cmd.Dir = dir
	if _, err := exec.LookPath(cmd.Path); err != nil {
		return nil, fmt.Errorf("building %s needs %s (Debian packages wabt, clang, lld, wasi-libc, rustc, cargo, libstd-rust-dev-wasm32; npm ci in sdk/assemblyscript; .ci/run installs them): %w", dir, filepath.Base(cmd.Path), err)
	}
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build %s: %v\n%s", dir, err, msg)
	}
	return os.ReadFile(built)
}

// command is the build of the module in dir into target, and the file the
// module is then in.
func command(dir, target string) (*exec.Cmd, string, error) {
	wats, _ := filepath.Glob(filepath.Join(dir, "*.wat"))
	cs, _ := filepath.Glob(filepath.Join(dir, "*.c"))
	switch {
	case len(wats) == 1:
		return exec.Command("wat2wasm", wats[0], "-o", target), target, nil
	case len(cs) > 0:
		args := []string{"--target=wasm32-wasi", "-O2", "-mexec-model=reactor", "-o", target}
		if usesCSDK(cs) {
			sdk := filepath.Join(Root(), "sdk", "c")
			args = append(args, "-I"+sdk, filepath.Join(sdk, "platform_udf.c"), filepath.Join(sdk, "platform_json.c"))
		}
		return exec.Command("clang", append(args, cs...)...), target, nil
	case exists(dir, "Cargo.toml"):
		name, err := crateName(filepath.Join(dir, "Cargo.toml"))
		if err != nil {
			return nil, "", err
		}
		cmd := exec.Command(debian("cargo"), "build", "--offline", "--release", "--target", rustTarget)
		cmd.Env = append(os.Environ(), "RUSTC="+debian("rustc"))
		return cmd, filepath.Join(dir, "target", rustTarget, "release", strings.ReplaceAll(name, "-", "_")+".wasm"), nil
	case exists(dir, "lib.rs"):
		return exec.Command(debian("rustc"), "--edition", "2021", "--crate-type", "cdylib", "--target", rustTarget,
			"-C", "opt-level=3", "-C", "panic=abort", "-C", "strip=symbols", "-o", target, "lib.rs"), target, nil
	case exists(dir, "asconfig.json"):
		asc := filepath.Join(Root(), "sdk", "assemblyscript", "node_modules", ".bin", "asc")
		return exec.Command(asc, "--config", "asconfig.json", "--outFile", target), target, nil
	}
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", target, ".")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	return cmd, target, nil
}

// rustTarget is the target Rust UDFs are built for: no WASI needed.
const rustTarget = "wasm32-unknown-unknown"

// debian is the Debian build of a Rust tool, whose standard library has the
// wasm32 targets, ahead of another toolchain earlier on PATH.
func debian(tool string) string {
	if path := filepath.Join("/usr/bin", tool); exists("/usr/bin", tool) {
		return path
	}
	return tool
}

func exists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

// usesCSDK reports whether a C source includes the C SDK's header.
func usesCSDK(sources []string) bool {
	for _, src := range sources {
		if text, err := os.ReadFile(src); err == nil && strings.Contains(string(text), `#include "platform_udf.h"`) {
			return true
		}
	}
	return false
}

// crateName reads the package name from a Cargo.toml.
func crateName(manifest string) (string, error) {
	text, err := os.ReadFile(manifest)
	if err != nil {
		return "", err
	}
	inPackage := false
	for line := range strings.Lines(string(text)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			inPackage = line == "[package]"
			continue
		}
		if key, value, ok := strings.Cut(line, "="); ok && inPackage && strings.TrimSpace(key) == "name" {
			return strings.Trim(strings.TrimSpace(value), `"`), nil
		}
	}
	return "", fmt.Errorf("%s: no package name", manifest)
}
