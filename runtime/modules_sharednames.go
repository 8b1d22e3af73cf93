package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/jsplace"
)

// Module names in cluster mode: the KV bucket PLATFORM_MODULE_NAMES has a
// key per name whose value is the name's moduleName as JSON (its versions,
// oldest first, and its next version number). Every change reads the key,
// changes the value and writes it back only if the key is still at the
// revision it read (KV Create for a new name, Update otherwise); a writer
// that lost the race reads again, so that versions added at once on two
// workers are both kept and numbers are never given twice. A name keeps
// its key when its last version goes, so that its numbers are not reused.

// casAttempts bounds the tries of one name change against other writers.
const casAttempts = 100

// name reads one name's versions and the revision of its key: a name never
// used is nil at revision 0. It reads through the bucket's leader, not a
// direct get that a replica behind it may answer, so that a version is
// found at once after its upload, on any worker.
func (s *sharedModules) name(ctx context.Context, name string) (*moduleName, uint64, error) {
	msg, err := jsplace.LastMsgFromLeader(ctx, s.js, "KV_"+moduleNamesBucket, "$KV."+moduleNamesBucket+"."+name)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("module name %s: %w", name, err)
	}
	if op := msg.Header.Get("KV-Operation"); op == "DEL" || op == "PURGE" {
		return nil, msg.Sequence, nil
	}
	var n moduleName
	if err := json.Unmarshal(msg.Data, &n); err != nil {
		return nil, 0, fmt.Errorf("module name %s: %w", name, err)
	}
	return &n, msg.Sequence, nil
}

// allNames reads every name's versions.
func (s *sharedModules) allNames(ctx context.Context) (map[string]*moduleName, error) {
	w, err := s.names.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, fmt.Errorf("module names: %w", err)
	}
	defer func() { _ = w.Stop() }()
	names := map[string]*moduleName{}
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("module names: %w", ctx.Err())
		case e, ok := <-w.Updates():
			if !ok {
				return nil, errors.New("module names: the watch of the names ended early")
			}
			if e == nil {
				return names, nil // every name's latest value has come
			}
			if CheckModuleName(e.Key()) != nil {
				continue
			}
			var n moduleName
			if err := json.Unmarshal(e.Value(), &n); err != nil {
				return nil, fmt.Errorf("module name %s: %w", e.Key(), err)
			}
			names[e.Key()] = &n
		}
	}
}

// setName writes a name's versions if its key is still at revision rev (0:
// if it has none). It reports false when another writer was first.
func (s *sharedModules) setName(ctx context.Context, name string, n *moduleName, rev uint64) (bool, error) {
	data, err := json.Marshal(n)
	if err != nil {
		return false, fmt.Errorf("module name %s: %w", name, err)
	}
	if rev == 0 {
		_, err = s.names.Create(ctx, name, data)
		if errors.Is(err, jetstream.ErrKeyExists) {
			return false, nil
		}
	} else {
		_, err = s.names.Update(ctx, name, data, rev)
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return false, nil
		}
	}
	if err != nil {
		return false, fmt.Errorf("module name %s: %w", name, err)
	}
	return true, nil
}

// addVersion makes module id the name's next version, unless it is the
// name's latest version already, and returns the version.
func (s *sharedModules) addVersion(ctx context.Context, name, id string, now time.Time) (moduleVersion, error) {
	for range casAttempts {
		n, rev, err := s.name(ctx, name)
		if err != nil {
			return moduleVersion{}, err
		}
		if n == nil {
			n = &moduleName{Next: 1}
		}
		if v, ok := n.latest(); ok && v.ID == id {
			return v, nil
		}
		v := moduleVersion{Version: n.Next, ID: id, Uploaded: now.UTC()}
		n.Versions = append(n.Versions, v)
		n.Next++
		if ok, err := s.setName(ctx, name, n, rev); err != nil || ok {
			return v, err
		}
	}
	return moduleVersion{}, fmt.Errorf("module name %s: changed by others %d times in a row; retry", name, casAttempts)
}

// dropVersions removes every version that names module id.
func (s *sharedModules) dropVersions(ctx context.Context, id string) error {
	all, err := s.allNames(ctx)
	if err != nil {
		return err
	}
	for name, n := range all {
		if namesOf(map[string]*moduleName{name: n}, id) == nil {
			continue
		}
		if err := s.dropVersionsOf(ctx, name, id); err != nil {
			return err
		}
	}
	return nil
}

// dropVersionsOf removes the versions of one name that name module id.
func (s *sharedModules) dropVersionsOf(ctx context.Context, name, id string) error {
	for range casAttempts {
		n, rev, err := s.name(ctx, name)
		if err != nil || n == nil {
			return err
		}
		kept := make([]moduleVersion, 0, len(n.Versions))
		for _, v := range n.Versions {
			if v.ID != id {
				kept = append(kept, v)
			}
		}
		if len(kept) == len(n.Versions) {
			return nil
		}
		n.Versions = kept
		if ok, err := s.setName(ctx, name, n, rev); err != nil || ok {
			return err
		}
	}
	return fmt.Errorf("module name %s: changed by others %d times in a row; retry", name, casAttempts)
}

// resolve finds the id a reference names: an id as it is (whether the store
// has it is the caller's question), a name its latest version, name@version
// that version; for a name, it returns the name@version too.
func (s *sharedModules) resolve(ctx context.Context, ref string) (id, version string, err error) {
	if strings.HasPrefix(ref, "sha256:") {
		return ref, "", nil
	}
	name, num, err := parseModuleRef(ref)
	if err != nil {
		return "", "", err
	}
	n, _, err := s.name(ctx, name)
	if err != nil {
		return "", "", err
	}
	return pickVersion(n, ref, num)
}
