package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"wasmstream.io/platform/internal/udfdev"
)

// sandboxEnv is the environment of a build that must not find this
// repository, a module proxy or the user's configuration: HOME, the module
// cache and cargo's home are empty directories and the module proxy is off.
// The Go build cache and npm's download cache stay where they are, to keep
// the builds fast; neither holds the SDKs.
func sandboxEnv(t *testing.T) []string {
	t.Helper()
	home := t.TempDir()
	env := []string{"HOME=" + home, "GOMODCACHE=" + filepath.Join(home, "gomod"), "GOPROXY=off", "GOFLAGS=-mod=mod",
		"GOWORK=off", "CARGO_HOME=" + filepath.Join(home, "cargo"), "npm_config_update_notifier=false"}
	if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		env = append(env, "GOCACHE="+strings.TrimSpace(string(out)))
	}
	if real, err := os.UserHomeDir(); err == nil {
		env = append(env, "npm_config_cache="+filepath.Join(real, ".npm"))
	}
	var keep []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "HOME", "GOMODCACHE", "GOPROXY", "GOFLAGS", "GOWORK", "GOCACHE", "CARGO_HOME", "RUSTUP_HOME", "GOPATH", "npm_config_cache":
			continue
		}
		keep = append(keep, kv)
	}
	return append(keep, env...)
}

// TestUdfNewAnywhere runs `platform udf new` in an empty directory outside
// the repository, for every language, builds the project with its
// toolchain and runs its `make test` without the repository, a module
// proxy or the user's home; then `make streams deploy` creates the job's
// streams, uploads the module and submits job.yaml to a running platform,
// and a record published to the job's input comes out shouted.
func TestUdfNewAnywhere(t *testing.T) {
	bin, err := platformBinary()
	if err != nil {
		t.Fatal(err)
	}
	ts := startTestServer(t)
	natsURL := ts.s.embedded.ClientURL()
	for _, lang := range udfdev.Languages {
		t.Run(lang, func(t *testing.T) {
			work := t.TempDir()
			env := sandboxEnv(t)
			name := "hello-" + strings.ReplaceAll(lang, "assemblyscript", "as")
			cmd := exec.Command(bin, "udf", "new", name, "--lang", lang)
			cmd.Dir, cmd.Env = work, env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("udf new: %v\n%s", err, out)
			}
			if want := "created " + name + " (" + lang + "): make builds " + name + ".wasm, make test runs it over testdata/input.jsonl, make deploy submits job.yaml\n"; string(out) != want {
				t.Fatalf("udf new printed %q, want %q", out, want)
			}
			dir := filepath.Join(work, name)
			run := func(targets ...string) string {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, "make", append([]string{"-C", dir, "PLATFORM_CLI=" + bin}, targets...)...)
				cmd.Env = append(env, "PLATFORM_SERVER="+ts.base, "PLATFORM_NATS="+natsURL)
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("make %s: %v\n%s", strings.Join(targets, " "), err, out)
				}
				return string(out)
			}
			run("test")
			if _, err := os.Stat(filepath.Join(dir, name+".wasm")); err != nil {
				t.Fatal(err)
			}

			out2 := run("streams", "deploy")
			if !regexp.MustCompile(`(?m)^submitted job [0-9a-z-]+ \((CREATED|RUNNING)\)`).MatchString(out2) {
				t.Fatalf("make deploy printed\n%s", out2)
			}
			for _, args := range [][]string{{"pub", name + ".in", "stream me"}, {"pub", name + ".in", ""}, {"pub", name + ".in", "done"}} {
				if _, err := runCLI(t, append(args, "--nats", natsURL)...); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			got, _, err := runCLIWith(ctx, "", "sub", name+".out", "--all", "--count", "2", "--nats", natsURL)
			if err != nil {
				t.Fatal(err)
			}
			if want := "STREAM ME!\nDONE!\n"; got != want {
				t.Fatalf("the job's output is %q, want %q", got, want)
			}
		})
	}
}
