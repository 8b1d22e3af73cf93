package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestVersionStamped runs `platform version` of a binary built with
// -ldflags "-X main.version=...", as deploy/Dockerfile builds it.
func TestVersionStamped(t *testing.T) {
	bin, err := platformBinary()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^platform ` + regexp.QuoteMeta(testVersion) + ` \(go1\.\d+[^)]*\)\n$`).Match(out) {
		t.Fatalf("version printed %q", out)
	}
	if got, err := runCLI(t, "version"); err != nil || !strings.HasPrefix(got, "platform dev (go1.") {
		t.Fatalf("version without ldflags printed %q, %v", got, err)
	}
}

func TestDeployHealthCommand(t *testing.T) {
	ts := startTestServer(t)
	for _, args := range [][]string{{"health", "--server", ts.base}, {"health", "--server", ts.base + "/", "--ready"}} {
		if got, err := runCLI(t, args...); err != nil || got != "ok\n" {
			t.Fatalf("%v printed %q, %v", args, got, err)
		}
	}
	t.Setenv("PLATFORM_SERVER", ts.base)
	if got, err := runCLI(t, "health"); err != nil || got != "ok\n" {
		t.Fatalf("health with PLATFORM_SERVER printed %q, %v", got, err)
	}

	unready := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		http.Error(w, `{"title":"not ready"}`, http.StatusServiceUnavailable)
	}))
	defer unready.Close()
	if _, err := runCLI(t, "health", "--server", unready.URL, "--ready"); err == nil || err.Error() != `/readyz: 503 Service Unavailable: {"title":"not ready"}` {
		t.Fatalf("unready: error %v", err)
	}
	ts.stop()
	if _, err := runCLI(t, "health", "--server", ts.base, "--timeout", "2s"); err == nil || !strings.HasPrefix(err.Error(), "/healthz: Get ") {
		t.Fatalf("stopped server: error %v", err)
	}
}

func TestDeployNATSHost(t *testing.T) {
	cfg, err := loadConfig(t)
	if err != nil || cfg.NATSHost != "127.0.0.1" {
		t.Fatalf("default nats.host %q, %v", cfg.NATSHost, err)
	}
	if cfg, err = loadConfig(t, "--nats.host", "0.0.0.0"); err != nil || cfg.NATSHost != "0.0.0.0" {
		t.Fatalf("--nats.host: %q, %v", cfg.NATSHost, err)
	}
	t.Setenv("PLATFORM_NATS_HOST", "::")
	if cfg, err = loadConfig(t); err != nil || cfg.NATSHost != "::" {
		t.Fatalf("PLATFORM_NATS_HOST: %q, %v", cfg.NATSHost, err)
	}

	for host, want := range map[string]bool{"": true, "localhost": true, "127.0.0.1": true, "::1": true, "0.0.0.0": false, "10.1.2.3": false, "nats": false} {
		if got := loopback(host); got != want {
			t.Errorf("loopback(%q) = %v, want %v", host, got, want)
		}
	}
	for in, want := range map[string]string{
		"nats://0.0.0.0:4222":   "nats://127.0.0.1:4222",
		"nats://[::]:4223":      "nats://127.0.0.1:4223",
		"nats://127.0.0.1:4222": "nats://127.0.0.1:4222",
		"nats://10.0.0.5:4222":  "nats://10.0.0.5:4222",
	} {
		if got := loopbackURL(in); got != want {
			t.Errorf("loopbackURL(%q) = %q, want %q", in, got, want)
		}
	}

	ts := startTestServerWith(t, config{HTTPAddr: "127.0.0.1:0", DataDir: t.TempDir(), NATSHost: "0.0.0.0", NATSPort: -1, LogFormat: "text", LogLevel: "warn"})
	if got := ts.s.embedded.ClientURL(); !strings.HasPrefix(got, "nats://0.0.0.0:") {
		t.Fatalf("embedded server's URL %s, want it on 0.0.0.0", got)
	}
	if got := ts.s.nc.ConnectedUrl(); !strings.HasPrefix(got, "nats://127.0.0.1:") {
		t.Fatalf("the platform connected to %s, want 127.0.0.1", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := ts.js.AccountInfo(ctx); err != nil {
		t.Fatal(err)
	}
}
