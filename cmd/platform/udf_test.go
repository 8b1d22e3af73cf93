package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"wasmstream.io/platform/internal/udfdev"
	"wasmstream.io/platform/internal/wasmbuild"
)

// TestMain removes the binary platformBinary built, once every test ran.
// With natsNodeEnv set the test binary is instead a node of a test NATS
// cluster (startNATSCluster) and runs no test.
func TestMain(m *testing.M) {
	if spec := os.Getenv(natsNodeEnv); spec != "" {
		os.Exit(runNATSNode(spec))
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// testVersion is the version platformBinary stamps its binary with, as
// deploy/Dockerfile does.
const testVersion = "0.0.0-test"

// binDir is the directory of platformBinary's binary.
var binDir string

// platformBinary builds this command once per test binary, for Makefiles
// that run `platform udf test`, with the version testVersion; TestMain
// removes it.
var platformBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "platform-bin-")
	if err != nil {
		return "", err
	}
	binDir = dir
	bin := filepath.Join(dir, "platform")
	if msg, err := exec.Command("go", "build", "-ldflags=-X main.version="+testVersion, "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, msg)
	}
	return bin, nil
})

// runCLI runs the root command with args and returns its standard output.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, _, err := runCLIWith(context.Background(), "", args...)
	return out, err
}

// TestUDFNewAndTest scaffolds a project in every language with `platform udf
// new --platform`, which uses the repository's SDKs in place, builds it with its Makefile, runs its `make test` (which runs
// `platform udf test`), and runs `platform udf test` on the module.
func TestUDFNewAndTest(t *testing.T) {
	bin, err := platformBinary()
	if err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(t.TempDir(), "input.jsonl")
	if err := os.WriteFile(input, []byte(`{"key": "a", "value": "Stream me", "timestamp": 5}
{"key": "b"}
{"value_base64": "/3g="}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = `{"input":0,"key":"a","value":"STREAM ME!","timestamp":5}
{"input":1,"error":"empty value"}
{"input":2,"key":"","value_base64":"/1gh","timestamp":0}
`
	for _, lang := range udfdev.Languages {
		t.Run(lang, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "hello")
			out, err := runCLI(t, "udf", "new", "--lang", lang, "--dir", dir, "--platform", wasmbuild.Root(), "hello")
			if err != nil {
				t.Fatal(err)
			}
			if wantOut := "created " + dir + " (" + lang + "): make builds hello.wasm, make test runs it over testdata/input.jsonl, make deploy submits job.yaml\n"; out != wantOut {
				t.Fatalf("udf new printed %q, want %q", out, wantOut)
			}
			if msg, err := exec.Command("make", "-C", dir, "test", "PLATFORM_CLI="+bin).CombinedOutput(); err != nil {
				t.Fatalf("make test: %v\n%s", err, msg)
			}
			got, err := runCLI(t, "udf", "test", filepath.Join(dir, "hello.wasm"), "--function", "shout", "--input", input)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("udf test printed\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestUDFCommandErrors(t *testing.T) {
	wasm := filepath.Join(t.TempDir(), "kinds.wasm")
	if err := os.WriteFile(wasm, wasmbuild.UDF(t, "kinds-c"), 0o644); err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(input, []byte(`{"value": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no function flag", []string{"udf", "test", wasm, "--input", input}, `required flag(s) "function" not set`},
		{"missing module", []string{"udf", "test", "nope.wasm", "--function", "x", "--input", input}, "open nope.wasm"},
		{"unknown function", []string{"udf", "test", wasm, "--function", "x", "--input", input}, `the module has no function "x"`},
		{"bad input", []string{"udf", "test", wasm, "--function", "swap", "--input", wasm}, "input line 1"},
		{"window on a map", []string{"udf", "test", wasm, "--function", "swap", "--input", input, "--window", "10s"}, "--window goes with an aggregate"},
		{"bad state", []string{"udf", "test", wasm, "--function", "swap", "--input", input, "--state", "disk"}, `--state "disk": want memory or pebble`},
		{"bad window", []string{"udf", "test", wasm, "--function", "swap", "--input", input, "--window", "ten"}, `invalid argument "ten" for "--window"`},
		{"bad language", []string{"udf", "new", "--lang", "cobol", "--platform", wasmbuild.Root(), "--dir", t.TempDir(), "x"}, `language "cobol"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := runCLI(t, tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
