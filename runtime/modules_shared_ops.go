package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The Manager's module operations in cluster mode (modules_shared.go says
// what the shared store holds).

// uploadShared is UploadNamedModule in cluster mode: the module goes to the
// store (unless it has it), to the cache, and, with a name, becomes the
// name's next version.
func (m *Manager) uploadShared(ctx context.Context, wasm []byte, name string) (ModuleInfo, error) {
	e, err := m.addModule(ctx, wasm, time.Now())
	if err != nil {
		return ModuleInfo{}, err
	}
	info, err := m.shared.info(ctx, e.id)
	switch {
	case errors.Is(err, jetstream.ErrObjectNotFound):
		info, err = m.putShared(ctx, e.id, wasm, time.Now())
	case err == nil && info.Digest != objectDigest(e.id):
		// The right bytes repair a corrupt copy; it keeps its upload time.
		m.log.Warn("shared store's copy of the module is corrupt; replaced by the upload", "module", e.id, "stored", digestID(info.Digest))
		info, err = m.putShared(ctx, e.id, wasm, uploadedAt(info))
	}
	if err != nil {
		return ModuleInfo{}, fmt.Errorf("module %s: shared store: %w", e.id, err)
	}
	if err := m.storeLocal(e.id, wasm); err != nil {
		return ModuleInfo{}, err
	}
	version := ""
	if name != "" {
		v, err := m.shared.addVersion(ctx, name, e.id, time.Now())
		if err != nil {
			return ModuleInfo{}, fmt.Errorf("module %s: %w", e.id, err)
		}
		version = fmt.Sprintf("%s@%d", name, v.Version)
	}
	names, users, err := m.sharedViews(ctx)
	if err != nil {
		return ModuleInfo{}, err
	}
	out := e.info(users[e.id], namesOf(names, e.id))
	out.Uploaded, out.Version = uploadedAt(info), version
	return out, nil
}

// putShared writes module id's bytes to the store, streamed in chunks.
func (m *Manager) putShared(ctx context.Context, id string, wasm []byte, uploaded time.Time) (*jetstream.ObjectInfo, error) {
	meta := jetstream.ObjectMeta{Name: id, Metadata: map[string]string{uploadedMeta: uploaded.UTC().Format(time.RFC3339Nano)}}
	return m.shared.obs.Put(ctx, meta, bytes.NewReader(wasm))
}

// listShared is ListModules in cluster mode: the store's modules, each
// fetched here when this worker does not have it yet.
func (m *Manager) listShared(ctx context.Context) ([]ModuleInfo, error) {
	objs, err := m.shared.obs.List(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, fmt.Errorf("modules: shared store: %w", err)
	}
	names, users, err := m.sharedViews(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ModuleInfo, 0, len(objs))
	for _, o := range objs {
		if !isModuleID(o.Name) {
			continue
		}
		e, err := m.storedModule(ctx, o)
		if err != nil {
			return nil, err
		}
		info := e.info(users[e.id], namesOf(names, e.id))
		info.Uploaded = uploadedAt(o)
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Uploaded.Equal(out[j].Uploaded) {
			return out[i].Uploaded.Before(out[j].Uploaded)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// sharedRef finds the module a reference names in the store: an id, a
// name (its latest version) or name@version, returning it compiled with
// the name@version it resolved to and its upload time.
func (m *Manager) sharedRef(ctx context.Context, ref string) (*moduleEntry, string, time.Time, error) {
	id, version, err := m.shared.resolve(ctx, ref)
	if err != nil {
		return nil, "", time.Time{}, err
	}
	e, uploaded, err := m.sharedModule(ctx, id)
	switch {
	case err == nil:
		return e, version, uploaded, nil
	case id == ref:
		return nil, "", time.Time{}, err
	case errors.Is(err, ErrNotFound):
		return nil, "", time.Time{}, fmt.Errorf("module %s names %s, which the shared store no longer has: %w", version, id, ErrNotFound)
	default:
		return nil, "", time.Time{}, fmt.Errorf("%s: %w", version, err)
	}
}

// getShared is GetModule in cluster mode.
func (m *Manager) getShared(ctx context.Context, ref string) (ModuleInfo, error) {
	e, version, uploaded, err := m.sharedRef(ctx, ref)
	if err != nil {
		return ModuleInfo{}, err
	}
	names, users, err := m.sharedViews(ctx)
	if err != nil {
		return ModuleInfo{}, err
	}
	info := e.info(users[e.id], namesOf(names, e.id))
	info.Uploaded, info.Version = uploaded, version
	return info, nil
}

// resolveSharedModule is ResolveModule in cluster mode.
func (m *Manager) resolveSharedModule(ref string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	e, _, _, err := m.sharedRef(ctx, ref)
	if err != nil {
		return "", err
	}
	return e.id, nil
}

// deleteShared is DeleteModule in cluster mode, for an id or name@version:
// the module leaves the store, with every version that names it, unless a
// job uses it. A corrupt module can be deleted.
func (m *Manager) deleteShared(ctx context.Context, ref string) error {
	id, _, err := m.shared.resolve(ctx, ref)
	if err != nil {
		return err
	}
	if !isModuleID(id) {
		return fmt.Errorf("module %s: %w", ref, ErrNotFound)
	}
	_, err = m.shared.info(ctx, id)
	switch {
	case errors.Is(err, jetstream.ErrObjectNotFound) && id == ref:
		m.forgetModule(id)
		return fmt.Errorf("module %s: %w", ref, ErrNotFound)
	case errors.Is(err, jetstream.ErrObjectNotFound):
		// A version naming a module already gone: the versions still go.
	case err != nil:
		return fmt.Errorf("module %s: shared store: %w", ref, err)
	}
	users, err := m.sharedUsers(ctx)
	if err != nil {
		return fmt.Errorf("module %s: %w", ref, err)
	}
	if u := users[id]; len(u) > 0 {
		return fmt.Errorf("module %s is used by jobs %s: %w", ref, strings.Join(u, ", "), ErrInUse)
	}
	// Names first: a crash between the two leaves a module without names,
	// not names of a module that is gone.
	if err := m.shared.dropVersions(ctx, id); err != nil {
		return fmt.Errorf("module %s: %w", ref, err)
	}
	if err := m.shared.obs.Delete(ctx, id); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("module %s: shared store: %w", ref, err)
	}
	m.forgetModule(id)
	return nil
}

// sharedViews reads what a module's description needs besides the module:
// every name's versions and the jobs that use each module.
func (m *Manager) sharedViews(ctx context.Context) (map[string]*moduleName, map[string][]string, error) {
	names, err := m.shared.allNames(ctx)
	if err != nil {
		return nil, nil, err
	}
	users, err := m.sharedUsers(ctx)
	if err != nil {
		return nil, nil, err
	}
	return names, users, nil
}

// sharedUsers lists, by module id, the jobs not yet in a terminal state
// that use it, on any worker. This manager's jobs map holds only the jobs
// it runs; another worker's jobs are seen only through the job registry,
// whose records pin each job's modules. A record's state may lag its job's
// (a worker that died leaves its jobs running there until they resume), so
// a module counts as used until its jobs' records say they ended. A job
// submitted on another worker while a delete runs is not seen: its
// submission may pass its check just before the module goes, and the job
// then runs on that worker's copy until it is resumed after a restart.
func (m *Manager) sharedUsers(ctx context.Context) (map[string][]string, error) {
	var recs []*jobRecord
	if m.registry != nil {
		var err error
		if recs, err = m.registry.all(ctx); err != nil {
			return nil, err
		}
	}
	seen := map[string]map[string]bool{}
	use := func(module, job string) {
		if seen[module] == nil {
			seen[module] = map[string]bool{}
		}
		seen[module][job] = true
	}
	local := map[string]bool{}
	m.mu.Lock()
	for id, j := range m.jobs {
		local[id] = true
		if j.state().Terminal() {
			continue
		}
		for _, mid := range j.modules {
			use(mid, id)
		}
	}
	m.mu.Unlock()
	for _, rec := range recs {
		if local[rec.ID] || rec.State.Terminal() {
			continue // this worker's own jobs by their current state
		}
		for _, jm := range rec.Modules {
			use(jm.ID, rec.ID)
		}
	}
	users := make(map[string][]string, len(seen))
	for module, jobs := range seen {
		for job := range jobs {
			users[module] = append(users[module], job)
		}
		sort.Strings(users[module])
	}
	return users, nil
}
