package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"github.com/spf13/cobra"

	"wasmstream.io/platform/api"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime"
)

// TestTokenProtectsEmbeddedNATS: with api.token set, the embedded NATS
// server refuses anonymous clients; the platform generated a user key in
// the data directory (mode 0600), connects with it, and runs a job whose
// registry, checkpoints (in JetStream) and output all go through that
// connection; a restart reuses the key.
func TestTokenProtectsEmbeddedNATS(t *testing.T) {
	dir := t.TempDir()
	cfg := config{HTTPAddr: "127.0.0.1:0", DataDir: dir, NATSPort: -1, Token: "s3cret", LogFormat: "text", LogLevel: "warn",
		CheckpointStore: "jetstream"}
	ts := startTestServerWith(t, cfg)
	keyFile := filepath.Join(dir, natsUserKeyFile)
	st, err := os.Stat(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("%s has mode %v, want 0600", natsUserKeyFile, st.Mode().Perm())
	}
	seed, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	url := ts.s.embedded.ClientURL()

	if nc, err := nats.Connect(url, nats.Timeout(5*time.Second)); !errors.Is(err, nats.ErrAuthorization) {
		if nc != nil {
			nc.Close()
		}
		t.Fatalf("anonymous connect: %v, want %v", err, nats.ErrAuthorization)
	}
	kp, err := nkeys.FromSeed(bytes.TrimSpace(seed))
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	nc, err := nats.Connect(url, nats.Timeout(5*time.Second), nats.Nkey(pub, kp.Sign))
	if err != nil {
		t.Fatalf("connect with the generated key: %v", err)
	}
	nc.Close()

	// The CLI gets in with the key file, not without.
	ctx := context.Background()
	if _, _, err := runCLIWith(ctx, "", "stream", "ls", "--nats", url); err == nil || !strings.Contains(err.Error(), "Authorization Violation") {
		t.Fatalf("stream ls without the key: %v, want an authorization violation", err)
	}
	if _, _, err := runCLIWith(ctx, "", "stream", "add", "OUT", "--subjects", "gen_out", "--nats", url, "--nats-nkey", keyFile); err != nil {
		t.Fatalf("stream add with the key: %v", err)
	}

	const count = 500
	id := ts.submit(generatorJob(1, 0, count, "gen_out"))
	if job := ts.wait(id); job.State != runtime.StateFinished {
		t.Fatalf("job %s ended %s, want FINISHED", id, job.State)
	}
	checkSequenceOnce(t, ts.read("OUT"), count)
	if status, body := ts.call(http.MethodGet, "/v1/jobs/"+id+"/checkpoints", "", nil); status != http.StatusOK || !bytes.Contains(body, []byte(`"status":"COMPLETED"`)) {
		t.Fatalf("checkpoints: %d %s, want completed ones", status, body)
	}

	ts.stop()
	ts2 := startTestServerWith(t, cfg)
	again, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, seed) {
		t.Fatal("the restarted platform generated another key")
	}
	nc, err = nats.Connect(ts2.s.embedded.ClientURL(), nats.Timeout(5*time.Second), nats.Nkey(pub, kp.Sign))
	if err != nil {
		t.Fatalf("connect after the restart with the first key: %v", err)
	}
	nc.Close()
	if status, body := ts2.call(http.MethodGet, "/v1/jobs/"+id, "", nil); status != http.StatusOK || !bytes.Contains(body, []byte(`"state":"FINISHED"`)) {
		t.Fatalf("job after the restart: %d %s", status, body)
	}
}

// TestNoTokenLeavesEmbeddedNATSOpen: without API authentication the
// embedded server takes anonymous clients and no key is generated.
func TestNoTokenLeavesEmbeddedNATSOpen(t *testing.T) {
	ts := startTestServer(t)
	nc, err := nats.Connect(ts.s.embedded.ClientURL(), nats.Timeout(5*time.Second))
	if err != nil {
		t.Fatalf("anonymous connect: %v", err)
	}
	nc.Close()
	if _, err := os.Stat(filepath.Join(ts.s.cfg.DataDir, natsUserKeyFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("key file: %v, want none", err)
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key to
// dir and returns their paths and the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "platform test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err = x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "api.crt"), filepath.Join(dir, "api.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, cert
}

// TestAPIServesTLS: with api.tls.cert and api.tls.key the API serves HTTPS
// with that certificate, and a plain HTTP request is refused.
func TestAPIServesTLS(t *testing.T) {
	certFile, keyFile, cert := selfSigned(t, t.TempDir())
	ts := startTestServerWith(t, config{HTTPAddr: "127.0.0.1:0", DataDir: t.TempDir(), NATSPort: -1, Token: "s3cret",
		LogFormat: "text", LogLevel: "warn", TLSCert: certFile, TLSKey: keyFile})
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer client.CloseIdleConnections()

	req, err := http.NewRequest(http.MethodGet, "https://"+ts.s.addr()+"/v1/jobs", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("https: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != `{"jobs":[]}`+"\n" {
		t.Fatalf("https GET /v1/jobs: %d %s", resp.StatusCode, body)
	}
	if resp.TLS == nil || len(resp.TLS.PeerCertificates) == 0 || !resp.TLS.PeerCertificates[0].Equal(cert) {
		t.Fatal("the API did not present the configured certificate")
	}

	plain, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + ts.s.addr() + "/healthz")
	if err != nil {
		t.Fatalf("plain http: %v", err)
	}
	plain.Body.Close()
	if plain.StatusCode != http.StatusBadRequest {
		t.Fatalf("plain http to the https API: %d, want 400", plain.StatusCode)
	}
}

// loadConfig resolves the serve command's configuration from args.
func loadConfig(t *testing.T, args ...string) (config, error) {
	t.Helper()
	cmd := &cobra.Command{Use: "serve"}
	load := bindConfig(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return load()
}

func TestConfigTokensLimitsAndTLS(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "platform.yaml")
	if err := os.WriteFile(file, []byte(`
api:
  token: root
  tokens:
    - {token: r1, scope: read, name: dashboard}
    - {token: s1, scope: submit}
  max_concurrent_uploads: 2
  upload_bytes_in_flight: 1048576
  read_timeout: 5s
  upload_read_timeout: 1m
  request_timeout: 20s
  upload_timeout: 3m
  tls: {cert: a.crt, key: a.key}
nats:
  url: nats://nats.example:4222
  creds: app.creds
  tls: {ca: ca.pem}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := loadConfig(t, "--config", file)
	if err != nil {
		t.Fatal(err)
	}
	wantTokens := []api.Token{{Name: "dashboard", Secret: "r1", Scope: api.ScopeRead}, {Name: "api.tokens[1]", Secret: "s1", Scope: api.ScopeSubmit}}
	if len(c.Tokens) != 2 || c.Tokens[0] != wantTokens[0] || c.Tokens[1] != wantTokens[1] || c.Token != "root" {
		t.Errorf("tokens %+v, token %q", c.Tokens, c.Token)
	}
	wantLimits := apiLimits{MaxConcurrentUploads: 2, UploadBytesInFlight: 1 << 20, ReadTimeout: 5 * time.Second,
		UploadReadTimeout: time.Minute, RequestTimeout: 20 * time.Second, UploadTimeout: 3 * time.Minute}
	if c.Limits != wantLimits {
		t.Errorf("limits %+v, want %+v", c.Limits, wantLimits)
	}
	if c.TLSCert != "a.crt" || c.TLSKey != "a.key" {
		t.Errorf("tls %q %q", c.TLSCert, c.TLSKey)
	}
	if c.NATSAuth.Creds != "app.creds" || c.NATSAuth.TLSCA != "ca.pem" || !c.embeddedNATSAuth() {
		t.Errorf("nats auth %+v", c.NATSAuth)
	}

	d, err := loadConfig(t)
	if err != nil {
		t.Fatal(err)
	}
	wantDefaults := apiLimits{MaxConcurrentUploads: api.DefaultMaxConcurrentUploads, UploadBytesInFlight: api.DefaultUploadBytesInFlight,
		ReadTimeout: api.DefaultReadTimeout, UploadReadTimeout: api.DefaultUploadReadTimeout,
		RequestTimeout: api.DefaultRequestTimeout, UploadTimeout: api.DefaultUploadTimeout}
	if d.Limits != wantDefaults || d.embeddedNATSAuth() || len(d.Tokens) != 0 {
		t.Errorf("defaults: limits %+v, tokens %v", d.Limits, d.Tokens)
	}

	t.Setenv("PLATFORM_API_TOKENS", `[{"token":"e1","scope":"admin","name":"ops"}]`)
	e, err := loadConfig(t)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Tokens) != 1 || e.Tokens[0] != (api.Token{Name: "ops", Secret: "e1", Scope: api.ScopeAdmin}) || !e.embeddedNATSAuth() {
		t.Errorf("tokens from the environment: %+v", e.Tokens)
	}
}

func TestConfigRefusesBadSecuritySettings(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown scope", []string{"--config", write("scope.yaml", "api: {tokens: [{token: x, scope: write}]}\n")},
			`api.tokens[0]: scope "write" is not read, submit or admin`},
		{"unknown field", []string{"--config", write("field.yaml", "api: {tokens: [{token: x, scope: read, colour: red}]}\n")},
			"api.tokens: decoding failed due to the following error(s):\n\n'[0]' has invalid keys: colour"},
		{"empty token", []string{"--config", write("empty.yaml", "api: {tokens: [{scope: read, name: ci}]}\n")},
			"api.tokens: token ci: empty token"},
		{"api.token listed again", []string{"--api.token", "x", "--config", write("dup.yaml", "api: {tokens: [{token: x, scope: read}]}\n")},
			"api.tokens: token api.tokens[0]: the same token as an earlier one"},
		{"cert without key", []string{"--api.tls.cert", "a.crt"}, "api.tls.cert and api.tls.key go together: set both or neither"},
		{"nats credentials for the embedded server", []string{"--nats.user", "u", "--nats.password", "p"},
			"nats.creds, nats.user, nats.password and nats.tls.* are for an external NATS (nats.url); the embedded server's credentials are generated"},
		{"password without user", []string{"--nats.url", "nats://x:4222", "--nats.password", "p"}, "nats: connector: a NATS password needs a user"},
		{"negative limit", []string{"--api.max_concurrent_uploads", "-1"}, "api.max_concurrent_uploads: must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfig(t, tc.args...)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestPlatformAppliesNATSAuth: the platform's connection to an external
// server that requires credentials fails without them and carries those of
// the configuration.
func TestPlatformAppliesNATSAuth(t *testing.T) {
	ctx := context.Background()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	ext, err := connector.StartEmbedded(ctx, connector.EmbeddedConfig{DataDir: t.TempDir(), Port: -1, Users: []string{pub}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ext.Shutdown(context.Background()) }()
	cfg := config{HTTPAddr: "127.0.0.1:0", DataDir: t.TempDir(), NATSURL: ext.ClientURL(), LogFormat: "text", LogLevel: "warn"}
	if s, err := startServer(ctx, cfg, slog.New(slog.DiscardHandler)); err == nil {
		s.stop(ctx)
		t.Fatal("the platform connected to a protected NATS without credentials")
	} else if !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("error %v, want %v", err, nats.ErrAuthorization)
	}
	cfg.NATSAuth = connector.ClientAuth{NkeySeed: seed}
	ts := startTestServerWith(t, cfg)
	if !ts.s.nc.IsConnected() {
		t.Fatal("not connected")
	}
}
