package udfs

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// harnessScripts are the scripts in testdata/harness and the modules they
// drive: <script>-<language> for each SDK language. Each SDK's native
// harness runs a module's script and must write exactly <script>.want.
var harnessScripts = []string{"dedup", "timeout", "timers"}

// TestCHarness builds the C modules natively with the C SDK's harness
// (sdk/c/platform_harness.h, the Makefiles' harness target) and runs their
// scripts.
func TestCHarness(t *testing.T) {
	for _, script := range harnessScripts {
		t.Run(script, func(t *testing.T) {
			module := script + "-c"
			if err := statSources(module, "../sdk/c"); err != nil {
				t.Fatal(err)
			}
			bin := filepath.Join(t.TempDir(), module+"-harness")
			if msg, err := exec.Command("make", "-s", "-C", module, "harness", "HARNESS="+bin).CombinedOutput(); err != nil {
				t.Fatalf("make -C %s harness: %v\n%s", module, err, msg)
			}
			checkTranscript(t, script, exec.Command(bin))
		})
	}
}

// checkTranscript runs cmd with the script on its standard input and
// compares its standard output with the script's transcript, line by line.
func checkTranscript(t *testing.T, script string, cmd *exec.Cmd) {
	t.Helper()
	in, err := os.ReadFile(filepath.Join("testdata", "harness", script+".script"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "harness", script+".want"))
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = bytes.NewReader(in), &stderr
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, stderr.Bytes())
	}
	gotLines, wantLines := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < max(len(gotLines), len(wantLines)); i++ {
		var g, w string
		if i < len(gotLines) {
			g = gotLines[i]
		}
		if i < len(wantLines) {
			w = wantLines[i]
		}
		if g != w {
			t.Fatalf("transcript line %d: got %q, want %q\ngot:\n%s", i+1, g, w, got)
		}
	}
}

// TestAssemblyScriptHarness builds the AssemblyScript modules and runs
// their scripts in node with the AssemblyScript SDK's harness
// (sdk/assemblyscript/harness.mjs, through harness-script.mjs).
func TestAssemblyScriptHarness(t *testing.T) {
	for _, script := range harnessScripts {
		t.Run(script, func(t *testing.T) {
			module := script + "-as"
			if err := statSources(module, "../sdk/assemblyscript", "../sdk/assemblyscript/assembly"); err != nil {
				t.Fatal(err)
			}
			wasm := filepath.Join(t.TempDir(), module+".wasm")
			if msg, err := exec.Command("make", "-s", "-C", module, "OUT="+wasm).CombinedOutput(); err != nil {
				t.Fatalf("make -C %s: %v\n%s", module, err, msg)
			}
			checkTranscript(t, script, exec.Command("node", filepath.Join("..", "sdk", "assemblyscript", "harness-script.mjs"), wasm))
		})
	}
}

// ranTests matches cargo test's summary of a run that passed tests.
var ranTests = regexp.MustCompile(`test result: ok\. [1-9]`)

// TestRustHarness runs the Rust modules' native tests (cargo test, through
// their Makefiles), which run their scripts with the Rust SDK's Harness,
// and the SDK's own tests of the Harness.
func TestRustHarness(t *testing.T) {
	type run struct{ name, module, flags string }
	runs := []run{{"sdk", "timers-rust", "TEST_FLAGS=-p platform-udf"}}
	for _, script := range harnessScripts {
		runs = append(runs, run{script, script + "-rust", "TEST_FLAGS="})
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			if err := statSources(r.module, "../sdk/rust/src", "testdata/harness"); err != nil {
				t.Fatal(err)
			}
			msg, err := exec.Command("make", "-s", "-C", r.module, "test", r.flags).CombinedOutput()
			if err != nil {
				t.Fatalf("make -C %s test %s: %v\n%s", r.module, r.flags, err, msg)
			}
			if !ranTests.Match(msg) {
				t.Fatalf("make -C %s test %s ran no tests:\n%s", r.module, r.flags, msg)
			}
		})
	}
}
