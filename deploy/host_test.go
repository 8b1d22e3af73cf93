package deploy

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// dockerfile is deploy/Dockerfile's instructions, continuation lines
// joined, comments dropped.
func dockerfile(t *testing.T) []string {
	t.Helper()
	var out []string
	var cur string
	sc := bufio.NewScanner(bytes.NewReader(readFile(t, "Dockerfile")))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || (line == "" && cur == "") {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		out = append(out, cur+line)
		cur = ""
	}
	return out
}

// TestDeployDockerfile checks that the image is stamped with its version
// (the variable `platform version` prints), runs as a non-root user,
// checks its health with the binary, and that .dockerignore keeps what the
// build needs.
func TestDeployDockerfile(t *testing.T) {
	lines := dockerfile(t)
	var froms, args []string
	var user, health, entry string
	var build string
	for _, l := range lines {
		instr, rest, _ := strings.Cut(l, " ")
		switch strings.ToUpper(instr) {
		case "FROM":
			froms = append(froms, rest)
		case "ARG":
			args = append(args, rest)
		case "USER":
			user = rest
		case "HEALTHCHECK":
			health = rest
		case "ENTRYPOINT":
			entry = rest
		case "RUN":
			if strings.Contains(rest, "go build") {
				build = rest
			}
		}
	}
	if len(froms) != 2 || !strings.HasPrefix(froms[0], "golang:") || !strings.HasSuffix(froms[1], ":nonroot") {
		t.Errorf("FROM %q, want a golang build stage and a nonroot runtime", froms)
	}
	if !strings.Contains(build, `-X main.version=${VERSION}`) || !strings.Contains(build, "./cmd/platform") {
		t.Errorf("the build %q does not stamp main.version with VERSION", build)
	}
	if !regexp.MustCompile(`(?m)^var version = "dev"$`).Match(readFile(t, filepath.Join(root, "cmd", "platform", "commands.go"))) {
		t.Error("cmd/platform has no var version for -X main.version")
	}
	if slices.Index(args, "VERSION=dev") < 0 || len(args) != 2 {
		t.Errorf("ARG %q, want VERSION=dev in both stages", args)
	}
	if uid := strings.Split(user, ":")[0]; uid == "" || uid == "0" || uid == "root" {
		t.Errorf("USER %q, want a non-root user", user)
	}
	if !strings.Contains(health, `CMD ["/usr/local/bin/platform", "health"`) {
		t.Errorf("HEALTHCHECK %q, want platform health", health)
	}
	if entry != `["/usr/local/bin/platform"]` {
		t.Errorf("ENTRYPOINT %q", entry)
	}

	ignore := string(readFile(t, filepath.Join(root, ".dockerignore")))
	var patterns []string
	for line := range strings.Lines(ignore) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			patterns = append(patterns, line)
		}
	}
	for _, want := range []string{".git", "**/node_modules", "**/target"} {
		if !slices.Contains(patterns, want) {
			t.Errorf(".dockerignore lacks %s", want)
		}
	}
	for _, need := range []string{"go.mod", "go.sum", "cmd/platform/main.go", "sdk/go/register.go", "sdk/assemblyscript/package.json", "abi/abi.go", "sdks.go"} {
		for _, p := range patterns {
			if ok, _ := filepath.Match(strings.TrimPrefix(p, "/"), need); ok || strings.HasPrefix(need, strings.TrimSuffix(p, "/")+"/") {
				t.Errorf(".dockerignore's %s leaves out %s, which the build needs", p, need)
			}
		}
	}
}

// unit parses a systemd unit file into section -> key -> values.
func unit(t *testing.T, name string) map[string]map[string][]string {
	t.Helper()
	out := map[string]map[string][]string{}
	var section string
	sc := bufio.NewScanner(bytes.NewReader(readFile(t, name)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
			out[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s: line %q", name, line)
			}
			out[section][k] = append(out[section][k], v)
		}
	}
	return out
}

// TestDeploySystemd checks deploy/platform.service: a state directory that
// is the data directory, a non-root user, the hardening settings, and no
// MemoryDenyWriteExecute (wazero maps compiled code executable); and runs
// systemd-analyze verify on it where systemd-analyze is installed.
func TestDeploySystemd(t *testing.T) {
	u := unit(t, "platform.service")
	svc := u["Service"]
	one := func(k string) string {
		if len(svc[k]) != 1 {
			t.Errorf("Service.%s: %q, want one value", k, svc[k])
			return ""
		}
		return svc[k][0]
	}
	state := one("StateDirectory")
	if want := "/usr/local/bin/platform serve --data_dir /var/lib/" + state; state == "" || one("ExecStart") != want {
		t.Errorf("ExecStart %q, want %q", svc["ExecStart"], want)
	}
	if user := one("User"); user == "" || user == "root" || user == "0" {
		t.Errorf("User %q, want a non-root user", user)
	}
	for k, want := range map[string]string{
		"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes", "PrivateDevices": "yes",
		"ProtectKernelTunables": "yes", "ProtectKernelModules": "yes", "ProtectControlGroups": "yes", "RestrictSUIDSGID": "yes",
		"CapabilityBoundingSet": "", "Restart": "on-failure", "Type": "simple",
	} {
		if got := one(k); got != want {
			t.Errorf("Service.%s = %q, want %q", k, got, want)
		}
	}
	if _, ok := svc["MemoryDenyWriteExecute"]; ok {
		t.Error("MemoryDenyWriteExecute would stop wazero's compiler")
	}
	if env := one("Environment"); env != "PLATFORM_HTTP_ADDR=127.0.0.1:8080" {
		t.Errorf("Environment %q", env)
	}
	if got := u["Install"]["WantedBy"]; !slices.Equal(got, []string{"multi-user.target"}) {
		t.Errorf("WantedBy %q", got)
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed")
	}
	// verify checks that ExecStart's binary exists: point it at one that
	// does.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	text := strings.ReplaceAll(string(readFile(t, "platform.service")), "/usr/local/bin/platform", self)
	if err := os.WriteFile(filepath.Join(dir, "platform.service"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", filepath.Join(dir, "platform.service")).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}
