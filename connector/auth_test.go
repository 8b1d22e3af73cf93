package connector

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// TestUserKeyIsGeneratedOnceWithMode0600: the first call generates a user
// seed in a 0600 file, later calls return the same one, and a file others
// can read is narrowed back to 0600.
func TestUserKeyIsGeneratedOnceWithMode0600(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "nats-user.nk")
	seed, pub, narrowed, err := LoadOrCreateUserKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if narrowed {
		t.Error("a new key reported as narrowed")
	}
	if !nkeys.IsValidPublicUserKey(pub) {
		t.Fatalf("public key %q is not a user key", pub)
	}
	kp, err := nkeys.FromSeed(seed)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := kp.PublicKey(); got != pub {
		t.Fatalf("seed's public key %s, returned %s", got, pub)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", st.Mode().Perm())
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want the key only", len(entries))
	}

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	seed2, pub2, narrowed, err := LoadOrCreateUserKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(seed2) != string(seed) || pub2 != pub {
		t.Fatalf("second load gave %s, want the stored %s", pub2, pub)
	}
	if !narrowed {
		t.Error("a 0644 key not reported as narrowed")
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v after load, want 0600", st.Mode().Perm())
	}

	if err := os.WriteFile(path, []byte("not a seed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := LoadOrCreateUserKey(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("corrupt key: error %v, want one naming %s", err, path)
	}
}

// TestEmbeddedRequiresTheUserKey: an embedded server with a user key refuses
// anonymous clients and clients with another key (authorization violation),
// and serves JetStream to a client with the key.
func TestEmbeddedRequiresTheUserKey(t *testing.T) {
	ctx := testCtx(t)
	seed, pub, _, err := LoadOrCreateUserKey(filepath.Join(t.TempDir(), "user.nk"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := StartEmbedded(ctx, EmbeddedConfig{DataDir: t.TempDir(), Port: -1, Users: []string{pub}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()

	if _, _, err := Connect(ctx, srv.ClientURL(), "anonymous"); !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("anonymous connect: error %v, want %v", err, nats.ErrAuthorization)
	}
	other, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	otherSeed, _ := other.Seed()
	opts, err := ClientAuth{NkeySeed: otherSeed}.Options()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Connect(ctx, srv.ClientURL(), "stranger", opts...); !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("connect with another key: error %v, want %v", err, nats.ErrAuthorization)
	}

	opts, err = ClientAuth{NkeySeed: seed}.Options()
	if err != nil {
		t.Fatal(err)
	}
	nc, js, err := Connect(ctx, srv.ClientURL(), "platform", opts...)
	if err != nil {
		t.Fatalf("connect with the key: %v", err)
	}
	defer nc.Close()
	if err := EnsureStream(ctx, js, "AUTH", "auth.>"); err != nil {
		t.Fatal(err)
	}
	ack, err := js.Publish(ctx, "auth.x", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	if ack.Stream != "AUTH" || ack.Sequence != 1 {
		t.Fatalf("ack %+v, want stream AUTH sequence 1", ack)
	}
}

func TestStartEmbeddedRejectsABadUserKey(t *testing.T) {
	_, err := StartEmbedded(testCtx(t), EmbeddedConfig{DataDir: t.TempDir(), Port: -1, Users: []string{"UNOTAKEY"}})
	if err == nil || err.Error() != `connector: embedded NATS: "UNOTAKEY" is not a public user nkey` {
		t.Fatalf("error %v", err)
	}
}

func TestClientAuthOptions(t *testing.T) {
	kp, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	accountSeed, _ := kp.Seed()
	for _, tc := range []struct {
		name string
		auth ClientAuth
		n    int
		err  string
	}{
		{"none", ClientAuth{}, 0, ""},
		{"user and password", ClientAuth{User: "u", Password: "p"}, 1, ""},
		{"password without user", ClientAuth{Password: "p"}, 0, "connector: a NATS password needs a user"},
		{"creds and tls", ClientAuth{Creds: "x.creds", TLSCA: "ca.pem", TLSCert: "c.pem", TLSKey: "k.pem"}, 3, ""},
		{"cert without key", ClientAuth{TLSCert: "c.pem"}, 0, "connector: a NATS TLS client certificate needs its key, and a key its certificate"},
		{"account seed", ClientAuth{NkeySeed: accountSeed}, 0, "connector: nkey seed is not a user seed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := tc.auth.Options()
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if len(opts) != tc.n || gotErr != tc.err {
				t.Fatalf("got %d options, error %q; want %d, %q", len(opts), gotErr, tc.n, tc.err)
			}
		})
	}
}
