package connector

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// ClientAuth is how the platform's NATS clients authenticate to a server and
// secure the connection. Every field is optional; the zero value connects
// anonymously over plain TCP.
type ClientAuth struct {
	// Creds is a NATS credentials file (a user JWT and its nkey seed).
	Creds string
	// User and Password authenticate with a user name and password.
	User, Password string
	// NkeySeed is an nkey user seed ("SU..."): the client answers the
	// server's challenge with it. The embedded server's generated user is
	// one (see LoadOrCreateUserKey).
	NkeySeed []byte
	// TLSCA is a PEM file of the certificate authorities to trust; TLSCert
	// and TLSKey are the client certificate and key (both or neither).
	TLSCA, TLSCert, TLSKey string
}

// IsZero says whether a sets nothing: an anonymous plain connection.
func (a ClientAuth) IsZero() bool {
	return a.Creds == "" && a.User == "" && a.Password == "" && len(a.NkeySeed) == 0 &&
		a.TLSCA == "" && a.TLSCert == "" && a.TLSKey == ""
}

// Options returns the nats.go options that apply a to a connection. It fails
// when a is inconsistent: a password without a user, a certificate without
// its key, a seed that is not a user seed.
func (a ClientAuth) Options() ([]nats.Option, error) {
	var opts []nats.Option
	if a.Creds != "" {
		opts = append(opts, nats.UserCredentials(a.Creds))
	}
	switch {
	case a.User != "":
		opts = append(opts, nats.UserInfo(a.User, a.Password))
	case a.Password != "":
		return nil, errors.New("connector: a NATS password needs a user")
	}
	if len(a.NkeySeed) > 0 {
		kp, err := nkeys.FromSeed(a.NkeySeed)
		if err != nil {
			return nil, fmt.Errorf("connector: nkey seed: %w", err)
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return nil, fmt.Errorf("connector: nkey seed: %w", err)
		}
		if !nkeys.IsValidPublicUserKey(pub) {
			return nil, errors.New("connector: nkey seed is not a user seed")
		}
		opts = append(opts, nats.Nkey(pub, kp.Sign))
	}
	if (a.TLSCert == "") != (a.TLSKey == "") {
		return nil, errors.New("connector: a NATS TLS client certificate needs its key, and a key its certificate")
	}
	if a.TLSCA != "" {
		opts = append(opts, nats.RootCAs(a.TLSCA))
	}
	if a.TLSCert != "" {
		opts = append(opts, nats.ClientCert(a.TLSCert, a.TLSKey))
	}
	return opts, nil
}

// userKeyMode is the permission of the file holding the generated user
// seed: readable by the platform's user only.
const userKeyMode fs.FileMode = 0o600

// LoadOrCreateUserKey returns the nkey user seed stored at path and its
// public key, generating and storing a new one (mode 0600) when the file
// does not exist. A file others can read is narrowed to 0600 again; narrowed
// is true when that happened, so the caller can say so.
func LoadOrCreateUserKey(path string) (seed []byte, public string, narrowed bool, err error) {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return createUserKey(path)
	case err != nil:
		return nil, "", false, fmt.Errorf("connector: NATS user key: %w", err)
	}
	seed = []byte(strings.TrimSpace(string(data)))
	kp, err := nkeys.FromSeed(seed)
	if err != nil {
		return nil, "", false, fmt.Errorf("connector: NATS user key %s: %w", path, err)
	}
	public, err = kp.PublicKey()
	if err != nil || !nkeys.IsValidPublicUserKey(public) {
		return nil, "", false, fmt.Errorf("connector: NATS user key %s: not a user seed", path)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, "", false, fmt.Errorf("connector: NATS user key: %w", err)
	}
	if st.Mode().Perm()&^userKeyMode != 0 {
		if err := os.Chmod(path, userKeyMode); err != nil {
			return nil, "", false, fmt.Errorf("connector: NATS user key: %w", err)
		}
		narrowed = true
	}
	return seed, public, narrowed, nil
}

// createUserKey generates a user seed and writes it to path through a
// temporary file created with mode 0600 and renamed into place: the seed is
// never readable by others, and a crash leaves no partial key.
func createUserKey(path string) ([]byte, string, bool, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, "", false, fmt.Errorf("connector: generate NATS user key: %w", err)
	}
	seed, err := kp.Seed()
	if err != nil {
		return nil, "", false, fmt.Errorf("connector: generate NATS user key: %w", err)
	}
	public, err := kp.PublicKey()
	if err != nil {
		return nil, "", false, fmt.Errorf("connector: generate NATS user key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, "", false, fmt.Errorf("connector: NATS user key: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, "", false, fmt.Errorf("connector: NATS user key: %w", err)
	}
	tmp := f.Name()
	defer func() { _ = os.Remove(tmp) }()
	// CreateTemp makes the file 0600; Chmod makes sure whatever the umask.
	if err := f.Chmod(userKeyMode); err != nil {
		f.Close()
		return nil, "", false, fmt.Errorf("connector: NATS user key: %w", err)
	}
	if _, err := f.Write(append(seed, '\n')); err != nil {
		f.Close()
		return nil, "", false, fmt.Errorf("connector: NATS user key: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, "", false, fmt.Errorf("connector: NATS user key: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, "", false, fmt.Errorf("connector: NATS user key: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, "", false, fmt.Errorf("connector: NATS user key: %w", err)
	}
	return seed, public, false, nil
}
