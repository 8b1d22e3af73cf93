package main

import (
	"bytes"
	"context"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"wasmstream.io/platform/internal/wasmbuild"
)

// quickstart is the README's Quickstart section: its sh blocks in order and
// the output its text block shows.
type quickstart struct {
	blocks []string
	output []string
}

func readQuickstart(t *testing.T) quickstart {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(wasmbuild.Root(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "\n## Quickstart\n")
	if start < 0 {
		t.Fatal("README.md has no Quickstart section")
	}
	section := text[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var q quickstart
	for _, m := range regexp.MustCompile("(?s)```(sh|text)\n(.*?)```").FindAllStringSubmatch(section, -1) {
		switch {
		case m[1] == "sh":
			q.blocks = append(q.blocks, m[2])
		case q.output == nil:
			q.output = strings.Split(strings.TrimSpace(m[2]), "\n")
		}
	}
	if len(q.blocks) != 2 || len(q.output) == 0 {
		t.Fatalf("the Quickstart has %d sh blocks and %d output lines, want 2 blocks (serve, then the commands) and the output", len(q.blocks), len(q.output))
	}
	return q
}

// TestReadmeQuickstart runs the README's Quickstart as written, in a
// directory that looks like the repository's root (its entries linked), so
// that what the commands write stays out of the repository: the first block
// builds the binary and starts platform serve (the test runs that line in the
// background, on free ports given through the environment), the second runs
// as one sh script against it, and the counts it prints must be the ones the
// README shows.
func TestReadmeQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and the UDF and runs a platform")
	}
	q := readQuickstart(t)
	root := wasmbuild.Root()
	dir := t.TempDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch e.Name() {
		case ".git", "platform", "data":
		case "abi", "sdk":
			// The module root embeds them, and go:embed takes no links.
			copyTree(t, filepath.Join(root, e.Name()), filepath.Join(dir, e.Name()))
		default:
			if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	httpAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	natsPort := freePort(t)
	env := append(os.Environ(),
		"PLATFORM_SERVER=http://"+httpAddr, "PLATFORM_NATS_URL=nats://127.0.0.1:"+strconv.Itoa(natsPort))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	var serve *exec.Cmd
	var serveLog bytes.Buffer
	for line := range strings.SplitSeq(strings.TrimSpace(q.blocks[0]), "\n") {
		if strings.HasPrefix(line, "./platform serve") {
			serve = exec.Command("sh", "-c", "exec "+line)
			serve.Dir = dir
			serve.Env = append(os.Environ(), "PLATFORM_HTTP_ADDR="+httpAddr, "PLATFORM_NATS_PORT="+strconv.Itoa(natsPort))
			serve.Stdout, serve.Stderr = &serveLog, &serveLog
			if err := serve.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = serve.Process.Signal(syscall.SIGTERM)
				done := make(chan error, 1)
				go func() { done <- serve.Wait() }()
				select {
				case <-done:
				case <-time.After(30 * time.Second):
					_ = serve.Process.Kill()
					<-done
				}
			})
			continue
		}
		run := exec.CommandContext(ctx, "sh", "-e", "-c", line)
		run.Dir, run.Env = dir, env
		if out, err := run.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
	}
	if serve == nil {
		t.Fatal("the first Quickstart block does not start ./platform serve")
	}
	waitReady(t, ctx, "http://"+httpAddr, &serveLog)

	script := filepath.Join(dir, "quickstart.sh")
	if err := os.WriteFile(script, []byte(q.blocks[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.CommandContext(ctx, "sh", "-e", script)
	run.Dir, run.Env = dir, env
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("the Quickstart commands: %v\nstdout:\n%s\nstderr:\n%s\nserver:\n%s", err, stdout.String(), stderr.String(), serveLog.String())
	}
	// The sample is the last command: its lines end the output. Records of
	// the same event time are ordered by word; the two lines' words have
	// their own times unless both were stored in the same millisecond, so
	// the counts are compared as a set.
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) < len(q.output) {
		t.Fatalf("output\n%s\nwant it to end with\n%s", stdout.String(), strings.Join(q.output, "\n"))
	}
	got := slices.Sorted(slices.Values(lines[len(lines)-len(q.output):]))
	want := slices.Sorted(slices.Values(q.output))
	if !slices.Equal(got, want) {
		t.Fatalf("counts\n%s\nwant\n%s\n(whole output:\n%s)", strings.Join(got, "\n"), strings.Join(want, "\n"), stdout.String())
	}
	// The print sink wrote each count to the server's log.
	for _, w := range q.output {
		if !strings.Contains(serveLog.String(), "msg=\""+w+"\"") {
			t.Errorf("the server's log has no line %q:\n%s", w, serveLog.String())
		}
	}
}

// copyTree copies the regular files under src to dst, without the
// directories of installed packages (node_modules).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir() && d.Name() == "node_modules":
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitReady polls the API's readiness until it answers 200.
func waitReady(t *testing.T, ctx context.Context, base string, log *bytes.Buffer) {
	t.Helper()
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("platform serve is not ready: %v\n%s", err, log.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
