package udfs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// buildDir receives the modules the tests build.
var buildDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "udfs-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// build is a module's binary, built once per test binary.
type build struct {
	once sync.Once
	wasm []byte
	err  error
}

// builds are the directories of udfs/, by name.
var builds = map[string]*build{
	"avg":              {},
	"avg-as":           {},
	"avg-c":            {},
	"avg-rust":         {},
	"enrich":           {},
	"enrich-as":        {},
	"enrich-c":         {},
	"enrich-rust":      {},
	"evictor":          {},
	"evictor-as":       {},
	"evictor-c":        {},
	"faulty-wat":       {},
	"firings":          {},
	"firings-as":       {},
	"firings-c":        {},
	"firings-rust":     {},
	"idle":             {},
	"joinkinds":        {},
	"joinkinds-as":     {},
	"joinkinds-c":      {},
	"joinkinds-rust":   {},
	"jsonmap":          {},
	"jsonmap-as":       {},
	"jsonmap-c":        {},
	"jsonmap-rust":     {},
	"jsonmap-std":      {},
	"kinds":            {},
	"kinds-as":         {},
	"kinds-c":          {},
	"kinds-rust":       {},
	"lookup":           {},
	"lookup-as":        {},
	"lookup-c":         {},
	"lookup-rust":      {},
	"nexmark":          {},
	"nexmark-rust":     {},
	"sessions":         {},
	"trigger":          {},
	"trigger-rust":     {},
	"upper":            {},
	"upper-wat":        {},
	"windowkinds-as":   {},
	"windowkinds-c":    {},
	"windowkinds-rust": {},
	"wordcount":        {},
	"wordcount-as":     {},
	"wordcount-c":      {},
	"wordcount-rust":   {},
}

// wasmOf builds the module in directory name with its Makefile, into
// buildDir, and returns its bytes.
func wasmOf(tb testing.TB, name string) []byte {
	tb.Helper()
	b := builds[name]
	b.once.Do(func() {
		if b.err = statSources(name, ".", "../sdk/go", "../abi", "../sdk/rust/src", "../sdk/c", "../sdk/assemblyscript/assembly"); b.err != nil {
			return
		}
		out := filepath.Join(buildDir, name+".wasm")
		if msg, err := exec.Command("make", "-C", name, "OUT="+out).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("make -C %s: %v\n%s", name, err, msg)
			return
		}
		b.wasm, b.err = os.ReadFile(out)
	})
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.wasm
}

// statSources stats every file in dirs. The go command records the files a
// test stats, so a cached test result is discarded when a module's sources
// change, although the test only reads them through make.
func statSources(dirs ...string) error {
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if _, err := os.Stat(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}
