package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/jsplace"
)

// Modules in cluster mode (Config.SharedModules): the shared store is the
// truth, and every worker sees the same modules and names in it.
//
//   - PLATFORM_MODULES, an object store bucket, holds one object per module,
//     named by its id ("sha256:<hex>"), with its upload time in the object's
//     metadata. Content-addressed: an upload of an id the bucket has is a
//     no-op, and an object whose SHA-256 is not its id is corrupt.
//   - PLATFORM_MODULE_NAMES, a KV bucket, holds one key per module name,
//     its versions and next version number as JSON (modules_sharednames.go),
//     written compare-and-set on the key's revision.
//
// data_dir/modules/<hex>.wasm is a cache of the modules this worker has
// used: a module it does not have is fetched when first needed, checked and
// compiled (the host's compilation cache keeps the code). A worker's map of
// compiled modules may hold modules another worker has deleted since; every
// operation that names a module asks the store whether it still has it,
// except the lookups of jobs already checked at submission.
const (
	modulesBucket     = "PLATFORM_MODULES"
	moduleNamesBucket = "PLATFORM_MODULE_NAMES"
	// uploadedMeta is the object metadata key of a module's upload time.
	uploadedMeta = "uploaded"
	// sharedTimeout bounds the store operations of lookups whose callers
	// have no context (a fetch is one module's bytes).
	sharedTimeout = 2 * time.Minute
)

// ErrCorruptModule: the shared store's copy of a module is not the module
// its id names.
var ErrCorruptModule = errors.New("corrupt module")

// sharedModules is where a cluster keeps its modules and their names.
type sharedModules struct {
	js    jetstream.JetStream
	obs   jetstream.ObjectStore
	names jetstream.KeyValue
}

// openSharedModules opens (or makes) the buckets of Config.SharedModules
// and the local cache directory; it replaces loadModules.
func (m *Manager) openSharedModules(ctx context.Context) error {
	js := m.cfg.JetStream
	if js == nil {
		return errors.New("shared modules: no JetStream: cluster mode keeps modules in JetStream")
	}
	if err := os.MkdirAll(filepath.Join(m.cfg.DataDir, "modules"), 0o755); err != nil {
		return fmt.Errorf("shared modules: %w", err)
	}
	obs, err := jsplace.Create(ctx, func(ctx context.Context) (jetstream.ObjectStore, error) {
		return js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket: modulesBucket, Description: "platform modules, named by content hash", Storage: jetstream.FileStorage, Replicas: m.replicas(),
		})
	})
	if err != nil {
		return fmt.Errorf("shared modules: bucket %s: %w", modulesBucket, err)
	}
	kv, err := jsplace.Create(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
		return js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: moduleNamesBucket, Description: "platform module names and their versions", Storage: jetstream.FileStorage, History: 1, Replicas: m.replicas(),
		})
	})
	if err != nil {
		return fmt.Errorf("shared modules: bucket %s: %w", moduleNamesBucket, err)
	}
	m.shared = &sharedModules{js: js, obs: obs, names: kv}
	return nil
}

// isModuleID says whether id is a module id: "sha256:" and 64 lowercase
// hex digits. Only such ids reach the store and the cache's file names.
func isModuleID(id string) bool {
	h, ok := strings.CutPrefix(id, "sha256:")
	if !ok || len(h) != 64 {
		return false
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// objectDigest is the digest the object store records for the bytes of
// module id: their SHA-256, as the id says, in the store's notation.
func objectDigest(id string) string {
	sum, _ := hex.DecodeString(strings.TrimPrefix(id, "sha256:"))
	return "SHA-256=" + base64.URLEncoding.EncodeToString(sum)
}

// digestID turns an object store digest back into a module id.
func digestID(digest string) string {
	sum, err := jetstream.DecodeObjectDigest(digest)
	if err != nil {
		return fmt.Sprintf("an unreadable digest %q", digest)
	}
	return "sha256:" + hex.EncodeToString(sum)
}

// corruptModule is the error of a module whose stored bytes hash to got.
func corruptModule(id, got string) error {
	return fmt.Errorf("module %s: %w: the shared store's copy hashes to %s (upload the module again to repair it, or delete it)", id, ErrCorruptModule, got)
}

// uploadedAt is a stored module's upload time: the one its uploader
// recorded, else the object's.
func uploadedAt(info *jetstream.ObjectInfo) time.Time {
	if t, err := time.Parse(time.RFC3339Nano, info.Metadata[uploadedMeta]); err == nil {
		return t.UTC()
	}
	return info.ModTime.UTC()
}

// sharedModule finds module id in the shared store and returns it compiled,
// with its upload time. A module the store does not have is ErrNotFound,
// and is forgotten here too.
func (m *Manager) sharedModule(ctx context.Context, id string) (*moduleEntry, time.Time, error) {
	if !isModuleID(id) {
		return nil, time.Time{}, fmt.Errorf("module %s: %w", id, ErrNotFound)
	}
	info, err := m.shared.info(ctx, id)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		m.forgetModule(id)
		return nil, time.Time{}, fmt.Errorf("module %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("module %s: shared store: %w", id, err)
	}
	e, err := m.storedModule(ctx, info)
	return e, uploadedAt(info), err
}

// info is the store's description of module id. The bucket's reads are
// direct gets, which a replica a new upload has not reached yet answers
// with "not found"; such an answer is asked of the stream's leader again,
// so that a module is found at once after its upload was acknowledged, on
// any worker.
func (s *sharedModules) info(ctx context.Context, id string) (*jetstream.ObjectInfo, error) {
	info, err := s.obs.GetInfo(ctx, id)
	if !errors.Is(err, jetstream.ErrObjectNotFound) {
		return info, err
	}
	msg, lerr := jsplace.LastMsgFromLeader(ctx, s.js, "OBJ_"+modulesBucket, "$O."+modulesBucket+".M."+base64.URLEncoding.EncodeToString([]byte(id)))
	if errors.Is(lerr, jetstream.ErrMsgNotFound) {
		return nil, err
	}
	if lerr != nil {
		return nil, lerr
	}
	var leaders jetstream.ObjectInfo
	if err := json.Unmarshal(msg.Data, &leaders); err != nil {
		return nil, fmt.Errorf("module %s: the store's description: %w", id, err)
	}
	if leaders.Deleted {
		return nil, err
	}
	leaders.ModTime = msg.Time
	return &leaders, nil
}

// storedModule returns the module an object of the store holds, compiled:
// the one this worker has, else the cache's copy, else fetched. An object
// whose digest is not its name's is corrupt, whatever the worker has, so
// that every worker answers alike.
func (m *Manager) storedModule(ctx context.Context, info *jetstream.ObjectInfo) (*moduleEntry, error) {
	id := info.Name
	if info.Digest != objectDigest(id) {
		return nil, corruptModule(id, digestID(info.Digest))
	}
	m.mu.Lock()
	e, ok := m.modules[id]
	m.mu.Unlock()
	if ok {
		return e, nil
	}
	wasm := m.readCached(id)
	if wasm == nil {
		var err error
		if wasm, err = m.fetchModule(ctx, id); err != nil {
			return nil, err
		}
	}
	e, err := m.addModule(ctx, wasm, uploadedAt(info))
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", id, err)
	}
	return e, nil
}

// readCached reads the cache's copy of module id, or nil when there is
// none whole: a copy whose hash is not the id is removed.
func (m *Manager) readCached(id string) []byte {
	path := m.moduleFile(id)
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	if sum := sha256.Sum256(wasm); "sha256:"+hex.EncodeToString(sum[:]) != id {
		m.log.Warn("cached module does not match its id; fetching it again", "module", id, "file", path)
		_ = os.Remove(path)
		return nil
	}
	return wasm
}

// fetchModule copies module id from the store into the cache, hashing it
// on the way, and returns its bytes once they prove to be the module.
func (m *Manager) fetchModule(ctx context.Context, id string) ([]byte, error) {
	res, err := m.shared.obs.Get(ctx, id)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, fmt.Errorf("module %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("module %s: shared store: %w", id, err)
	}
	defer res.Close()
	path := m.moduleFile(id)
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("module %s: cache: %w", id, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // fails once renamed
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(tmp, h), res)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	switch {
	case errors.Is(err, jetstream.ErrDigestMismatch):
		return nil, corruptModule(id, "another digest than the store recorded for it")
	case err != nil:
		return nil, fmt.Errorf("module %s: fetch: %w", id, err)
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != id {
		return nil, corruptModule(id, got)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, fmt.Errorf("module %s: cache: %w", id, err)
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("module %s: cache: %w", id, err)
	}
	return wasm, nil
}

// forgetModule drops a module the store no longer has from this worker:
// its compiled entry and its cached copy.
func (m *Manager) forgetModule(id string) {
	m.mu.Lock()
	_, had := m.modules[id]
	delete(m.modules, id)
	m.mu.Unlock()
	if err := os.Remove(m.moduleFile(id)); err != nil && !os.IsNotExist(err) {
		m.log.Warn("deleted module's cached copy not removed", "module", id, "error", err)
	} else if had {
		m.log.Info("module deleted from the shared store; dropped here", "module", id)
	}
}

// fetchMissing is lookupModule for a module this worker has not compiled:
// it is fetched from the store.
func (m *Manager) fetchMissing(id string) (*moduleEntry, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	e, _, err := m.sharedModule(ctx, id)
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			m.log.Warn("module not fetched from the shared store", "module", id, "error", err)
		}
		return nil, false
	}
	return e, true
}
