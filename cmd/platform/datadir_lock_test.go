package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// runUntilExit runs bin with args and returns its exit code and output
// (stdout and stderr together); a process still running after a minute is
// killed and fails the test.
func runUntilExit(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("%s %q: %v", bin, args, err)
		}
		return cmd.ProcessState.ExitCode(), out.String()
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s %q still running after a minute:\n%s", bin, args, out.String())
		return 0, ""
	}
}

// lockFileContent is what the data directory's lock file holds.
func lockFileContent(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, lockFileName))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// dirNames lists what dir holds, top level.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names
}

// TestDataDirLock: a second platform serve on the data directory of a
// running one exits non-zero with an error naming the first's pid, before
// it writes anything (its own NATS port stays closed and the lock file
// names the first); after the first is SIGKILLed its lock file, pid and
// all, is left behind and a new process starts on the directory anyway; a
// process that stops cleanly empties the file.
func TestDataDirLock(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs platform processes")
	}
	bin := buildPlatform(t)
	dir := t.TempDir()
	first := &child{t: t, bin: bin, dir: dir, http: fmt.Sprintf("127.0.0.1:%d", freePort(t)), natsPort: freePort(t)}
	t.Cleanup(first.stop)
	first.start()
	pid := first.cmd.Process.Pid
	if got, want := lockFileContent(t, dir), strconv.Itoa(pid)+"\n"; got != want {
		t.Fatalf("lock file %q, want %q", got, want)
	}
	before := dirNames(t, dir)

	code, out := runUntilExit(t, bin, "serve", "--data_dir", dir, "--http.addr", fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"--nats.port", strconv.Itoa(freePort(t)), "--log.level", "warn")
	want := fmt.Sprintf("error: data_dir %s is in use by another platform process (pid %d); stop it or choose another data_dir\n", dir, pid)
	if code == 0 || out != want {
		t.Fatalf("second serve: exit %d, output %q; want a non-zero exit and %q", code, out, want)
	}
	if got := lockFileContent(t, dir); got != strconv.Itoa(pid)+"\n" {
		t.Fatalf("lock file after the refused start %q, want the first's pid %d", got, pid)
	}
	if after := dirNames(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("data_dir holds %q after the refused start, %q before", after, before)
	}
	if status, _ := first.call(http.MethodGet, "/readyz", "", nil); status != http.StatusOK {
		t.Fatalf("first platform after the refused start: readyz %d", status)
	}

	first.kill()
	if got := lockFileContent(t, dir); got != strconv.Itoa(pid)+"\n" {
		t.Fatalf("lock file after kill -9 %q, want the killed process's pid %d left in it", got, pid)
	}
	next := &child{t: t, bin: bin, dir: dir, http: fmt.Sprintf("127.0.0.1:%d", freePort(t)), natsPort: freePort(t)}
	t.Cleanup(next.stop)
	next.start()
	if got, want := lockFileContent(t, dir), strconv.Itoa(next.cmd.Process.Pid)+"\n"; got != want {
		t.Fatalf("lock file of the next process %q, want %q", got, want)
	}
	next.stop()
	if code := next.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("next platform exited %d:\n%s", code, next.log)
	}
	if got := lockFileContent(t, dir); got != "" {
		t.Fatalf("lock file after a clean stop %q, want it empty", got)
	}
}
