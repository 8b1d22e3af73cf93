package runtime

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/spec"
)

// moduleEntry is an uploaded, validated and compiled module.
type moduleEntry struct {
	id       string
	desc     abi.Description
	mod      *host.Module
	size     int
	uploaded time.Time
}

func (m *moduleEntry) info(usedBy, names []string) ModuleInfo {
	return ModuleInfo{ID: m.id, Names: names, Size: m.size, Functions: m.desc.Functions, States: m.desc.States, Uploaded: m.uploaded, UsedBy: usedBy}
}

// moduleVersion is one version of a named module: the module it names.
type moduleVersion struct {
	Version  int       `json:"version"`
	ID       string    `json:"id"`
	Uploaded time.Time `json:"uploaded"`
}

// moduleName is a module name's versions, oldest first, and the number its
// next version gets: versions are never reused, even after a delete.
type moduleName struct {
	Next     int             `json:"next"`
	Versions []moduleVersion `json:"versions"`
}

// latest is the name's newest version, if it has any.
func (n *moduleName) latest() (moduleVersion, bool) {
	if n == nil || len(n.Versions) == 0 {
		return moduleVersion{}, false
	}
	return n.Versions[len(n.Versions)-1], true
}

// namesIndex is the file that keeps module names: data_dir/modules/names.json.
type namesIndex struct {
	Names map[string]*moduleName `json:"names"`
}

// ErrInvalidModuleName: a module name or reference that is not one.
var ErrInvalidModuleName = errors.New("invalid module name")

// moduleNameRE is what a module name is.
var moduleNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// CheckModuleName says what is wrong with a module name, wrapping
// ErrInvalidModuleName: a name is a lowercase letter or digit, then at most
// 62 lowercase letters, digits, '_' or '-'.
func CheckModuleName(name string) error {
	if !moduleNameRE.MatchString(name) {
		return fmt.Errorf("%w %q: want a lowercase letter or digit, then at most 62 lowercase letters, digits, '_' or '-'", ErrInvalidModuleName, name)
	}
	return nil
}

// namesFile is where the module names are kept.
func (m *Manager) namesFile() string {
	return filepath.Join(m.cfg.DataDir, "modules", "names.json")
}

// loadNames reads the names index, leaving out versions of modules that
// are gone.
func (m *Manager) loadNames() error {
	data, err := os.ReadFile(m.namesFile())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("module names: %w", err)
	}
	var idx namesIndex
	if err := json.Unmarshal(data, &idx); err != nil {
		return fmt.Errorf("module names: %s: %w", m.namesFile(), err)
	}
	for name, n := range idx.Names {
		if n == nil || CheckModuleName(name) != nil {
			continue
		}
		kept := n.Versions[:0]
		for _, v := range n.Versions {
			if _, ok := m.modules[v.ID]; ok {
				kept = append(kept, v)
			} else {
				m.log.Warn("module name's version names a module no longer stored; dropped", "module", name+"@"+strconv.Itoa(v.Version), "id", v.ID)
			}
		}
		n.Versions = kept
		m.names[name] = n
	}
	return nil
}

// saveNamesLocked rewrites the names index atomically (a new file renamed
// over the old one); m.mu is held.
func (m *Manager) saveNamesLocked() error {
	data, err := json.MarshalIndent(namesIndex{Names: m.names}, "", "  ")
	if err != nil {
		return err
	}
	path := m.namesFile()
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("module names: %w", err)
	}
	_, err = f.Write(append(data, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("module names: %w", err)
	}
	return nil
}

// namesOfLocked lists the name@version references of module id, by name
// and version; m.mu is held.
func (m *Manager) namesOfLocked(id string) []string {
	return namesOf(m.names, id)
}

// namesOf lists the name@version references among names of module id, by
// name and version.
func namesOf(names map[string]*moduleName, id string) []string {
	var out []string
	for name, n := range names {
		for _, v := range n.Versions {
			if v.ID == id {
				out = append(out, name+"@"+strconv.Itoa(v.Version))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return versionLess(out[i], out[j]) })
	return out
}

// versionLess orders name@version references by name, then version.
func versionLess(a, b string) bool {
	an, av, _ := strings.Cut(a, "@")
	bn, bv, _ := strings.Cut(b, "@")
	if an != bn {
		return an < bn
	}
	ai, _ := strconv.Atoi(av)
	bi, _ := strconv.Atoi(bv)
	return ai < bi
}

// resolveLocked finds the module a reference names: an id, a name (its
// latest version) or name@version. It returns the id and, for a name, the
// name@version it resolved to; m.mu is held.
func (m *Manager) resolveLocked(ref string) (id, version string, err error) {
	if strings.HasPrefix(ref, "sha256:") {
		if _, ok := m.modules[ref]; !ok {
			return "", "", fmt.Errorf("module %s: %w", ref, ErrNotFound)
		}
		return ref, "", nil
	}
	name, num, err := parseModuleRef(ref)
	if err != nil {
		return "", "", err
	}
	return pickVersion(m.names[name], ref, num)
}

// parseModuleRef splits a module name or name@version reference into the
// name and the version, 0 for a bare name.
func parseModuleRef(ref string) (name string, version int, err error) {
	name, ver, versioned := strings.Cut(ref, "@")
	if err := CheckModuleName(name); err != nil {
		return "", 0, err
	}
	if !versioned {
		return name, 0, nil
	}
	num, perr := strconv.Atoi(ver)
	if perr != nil || num < 1 || strconv.Itoa(num) != ver {
		return "", 0, fmt.Errorf("%w %q: the version after '@' is a number from 1", ErrInvalidModuleName, ref)
	}
	return name, num, nil
}

// pickVersion finds version num (the latest for 0) among n, the versions
// of the name ref names, and returns its id and name@version.
func pickVersion(n *moduleName, ref string, num int) (id, version string, err error) {
	name, _, _ := strings.Cut(ref, "@")
	if num == 0 {
		v, ok := n.latest()
		if !ok {
			return "", "", fmt.Errorf("module %s: no module has this name: %w", ref, ErrNotFound)
		}
		return v.ID, name + "@" + strconv.Itoa(v.Version), nil
	}
	if n != nil {
		for _, v := range n.Versions {
			if v.Version == num {
				return v.ID, ref, nil
			}
		}
	}
	return "", "", fmt.Errorf("module %s: no such version: %w", ref, ErrNotFound)
}

// ResolveModule finds the module a reference names: an id, a name (its
// latest version) or name@version.
func (m *Manager) ResolveModule(ref string) (string, error) {
	if m.shared != nil {
		return m.resolveSharedModule(ref) // modules_shared_ops.go
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	id, _, err := m.resolveLocked(ref)
	return id, err
}

// resolveSpecModules replaces the module names in a parsed spec's function
// references with the ids they name: pinned ones (those a resumed job
// recorded) as recorded, the others as the uploaded modules have them now.
// It returns every reference with what it resolved to, in the order the
// spec names them.
func (m *Manager) resolveSpecModules(js *spec.Job, pinned []JobModule) ([]JobModule, error) {
	if m.shared != nil {
		return m.resolveSharedSpecModules(js, pinned) // modules_shared_spec.go
	}
	fixed := map[string]JobModule{}
	for _, p := range pinned {
		fixed[p.Ref] = p
	}
	var refs []JobModule
	seen := map[string]bool{}
	var problems []string
	m.mu.Lock()
	defer m.mu.Unlock()
	walkModuleRefs(reflect.ValueOf(js).Elem(), "", func(path string, ref *string) {
		r, ok := fixed[*ref]
		if !ok {
			id, version, err := m.resolveLocked(*ref)
			switch {
			case errors.Is(err, ErrNotFound) && strings.HasPrefix(*ref, "sha256:"):
				// plan.Build says that the module is missing.
				return
			case err != nil:
				problems = append(problems, path+": "+m.refProblemLocked(*ref))
				return
			}
			r = JobModule{Ref: *ref, ID: id, Version: version}
		}
		if !seen[r.Ref] {
			seen[r.Ref] = true
			refs = append(refs, r)
		}
		*ref = r.ID
	})
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrInvalidJob, strings.Join(problems, "; "))
	}
	return refs, nil
}

// refProblemLocked says why a module name or name@version resolves to no
// module; m.mu is held.
func (m *Manager) refProblemLocked(ref string) string {
	name, _, _ := strings.Cut(ref, "@")
	return refProblem(m.names[name], ref)
}

// refProblem says why a module name or name@version resolves to no module,
// given n, the versions of its name (nil for a name never used).
func refProblem(n *moduleName, ref string) string {
	name, version, _ := strings.Cut(ref, "@")
	if n == nil || len(n.Versions) == 0 {
		return fmt.Sprintf("no module is named %q (upload one with: platform module push FILE.wasm --name %s)", name, name)
	}
	have := make([]string, len(n.Versions))
	for i, v := range n.Versions {
		have[i] = name + "@" + strconv.Itoa(v.Version)
	}
	return fmt.Sprintf("module %s has no version %s (it has %s)", name, version, strings.Join(have, ", "))
}

// walkModuleRefs calls f with the path and the value of every non-empty
// "module" string field under v, a spec value.
func walkModuleRefs(v reflect.Value, path string, f func(path string, ref *string)) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			walkModuleRefs(v.Elem(), path, f)
		}
	case reflect.Slice:
		for i := range v.Len() {
			walkModuleRefs(v.Index(i), fmt.Sprintf("%s[%d]", path, i), f)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			p := name
			if path != "" {
				p = path + "." + name
			}
			fv := v.Field(i)
			if name == "module" && fv.Kind() == reflect.String {
				if fv.String() != "" {
					f(p, fv.Addr().Interface().(*string))
				}
				continue
			}
			walkModuleRefs(fv, p, f)
		}
	}
}

// moduleFile is where a module's bytes are kept: named by content hash only.
func (m *Manager) moduleFile(id string) string {
	return filepath.Join(m.cfg.DataDir, "modules", strings.TrimPrefix(id, "sha256:")+".wasm")
}

// loadModules compiles the modules kept under the data directory, so that a
// restarted platform has what it had. The compilation cache makes this cheap.
func (m *Manager) loadModules(ctx context.Context) error {
	dir := filepath.Join(m.cfg.DataDir, "modules")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("modules: %w", err)
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("modules: %w", err)
	}
	for _, f := range files {
		name := f.Name()
		hexID, ok := strings.CutSuffix(name, ".wasm")
		if !ok || len(hexID) != 64 {
			continue
		}
		if _, err := hex.DecodeString(hexID); err != nil {
			continue
		}
		wasm, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("modules: %w", err)
		}
		info, err := f.Info()
		if err != nil {
			return fmt.Errorf("modules: %w", err)
		}
		if _, err := m.addModule(ctx, wasm, info.ModTime()); err != nil {
			m.log.Warn("stored module no longer valid; ignored", "file", name, "error", err)
		}
	}
	return m.loadNames()
}

// addModule compiles wasm and registers it; uploading the same bytes again
// returns the existing module.
func (m *Manager) addModule(ctx context.Context, wasm []byte, uploaded time.Time) (*moduleEntry, error) {
	mod, err := m.cfg.Host.Compile(ctx, wasm)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if existing, ok := m.modules[mod.ID]; ok {
		return existing, nil
	}
	e := &moduleEntry{id: mod.ID, desc: mod.Description, mod: mod, size: len(wasm), uploaded: uploaded.UTC()}
	m.modules[mod.ID] = e
	return e, nil
}

// UploadModule validates, compiles and stores a module by content hash.
func (m *Manager) UploadModule(ctx context.Context, wasm []byte) (ModuleInfo, error) {
	return m.UploadNamedModule(ctx, wasm, "")
}

// UploadNamedModule validates, compiles and stores a module by content
// hash and, with a name, makes it the name's next version: name@1, name@2
// ... Uploading the bytes of the name's latest version again makes no new
// version. The answer's Version is the name@version the upload made or
// found.
func (m *Manager) UploadNamedModule(ctx context.Context, wasm []byte, name string) (ModuleInfo, error) {
	if name != "" {
		if err := CheckModuleName(name); err != nil {
			return ModuleInfo{}, err
		}
	}
	if m.shared != nil {
		return m.uploadShared(ctx, wasm, name) // modules_shared_ops.go
	}
	e, err := m.addModule(ctx, wasm, time.Now())
	if err != nil {
		return ModuleInfo{}, err
	}
	if err := m.storeLocal(e.id, wasm); err != nil {
		return ModuleInfo{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	version := ""
	if name != "" {
		n := m.names[name]
		if n == nil {
			n = &moduleName{Next: 1}
		}
		v, ok := n.latest()
		if !ok || v.ID != e.id {
			v = moduleVersion{Version: n.Next, ID: e.id, Uploaded: time.Now().UTC()}
			n.Versions = append(n.Versions, v)
			n.Next++
			m.names[name] = n
			if err := m.saveNamesLocked(); err != nil {
				n.Versions = n.Versions[:len(n.Versions)-1]
				n.Next--
				if len(n.Versions) == 0 && n.Next == 1 {
					delete(m.names, name)
				}
				return ModuleInfo{}, err
			}
		}
		version = name + "@" + strconv.Itoa(v.Version)
	}
	info := e.info(m.usedByLocked(e.id), m.namesOfLocked(e.id))
	info.Version = version
	return info, nil
}

// storeLocal writes a module's bytes to the data directory, unless they
// are there already: to a temporary file of its own renamed into place,
// so that uploads of the same bytes at once do not trip over each other.
func (m *Manager) storeLocal(id string, wasm []byte) error {
	path := m.moduleFile(id)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("module %s: store: %w", id, err)
	}
	_, err = tmp.Write(wasm)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("module %s: store: %w", id, err)
	}
	return nil
}

// ListModules lists the uploaded modules by upload time.
func (m *Manager) ListModules(ctx context.Context) ([]ModuleInfo, error) {
	if m.shared != nil {
		return m.listShared(ctx) // modules_shared_ops.go
	}
	m.mu.Lock()
	entries := make([]*moduleEntry, 0, len(m.modules))
	for _, e := range m.modules {
		entries = append(entries, e)
	}
	m.mu.Unlock()
	sort.Slice(entries, func(i, j int) bool {
		if !entries[i].uploaded.Equal(entries[j].uploaded) {
			return entries[i].uploaded.Before(entries[j].uploaded)
		}
		return entries[i].id < entries[j].id
	})
	out := make([]ModuleInfo, len(entries))
	m.mu.Lock()
	for i, e := range entries {
		out[i] = e.info(m.usedByLocked(e.id), m.namesOfLocked(e.id))
	}
	m.mu.Unlock()
	return out, nil
}

// GetModule describes one module, named by its id, name (its latest
// version) or name@version.
func (m *Manager) GetModule(ctx context.Context, ref string) (ModuleInfo, error) {
	if m.shared != nil {
		return m.getShared(ctx, ref) // modules_shared_ops.go
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	id, version, err := m.resolveLocked(ref)
	if err != nil {
		return ModuleInfo{}, err
	}
	info := m.modules[id].info(m.usedByLocked(id), m.namesOfLocked(id))
	info.Version = version
	return info, nil
}

// DeleteModule removes a module no running job uses, named by its id or
// name@version, with every name@version that names it. A bare name is
// refused: it would delete whichever version is the latest.
func (m *Manager) DeleteModule(ctx context.Context, ref string) error {
	if !strings.HasPrefix(ref, "sha256:") && !strings.Contains(ref, "@") {
		if err := CheckModuleName(ref); err != nil {
			return err
		}
		return fmt.Errorf("%w %q: name a version to delete (%s@N; platform module list shows them) or the module's id", ErrInvalidModuleName, ref, ref)
	}
	if m.shared != nil {
		return m.deleteShared(ctx, ref) // modules_shared_ops.go
	}
	m.mu.Lock()
	id, _, err := m.resolveLocked(ref)
	if err != nil {
		m.mu.Unlock()
		return err
	}
	if users := m.usedByLocked(id); len(users) > 0 {
		m.mu.Unlock()
		return fmt.Errorf("module %s is used by jobs %s: %w", ref, strings.Join(users, ", "), ErrInUse)
	}
	delete(m.modules, id)
	named := false
	for name, n := range m.names {
		kept := n.Versions[:0]
		for _, v := range n.Versions {
			if v.ID == id {
				named = true
			} else {
				kept = append(kept, v)
			}
		}
		n.Versions = kept
		m.names[name] = n
	}
	if named {
		if err := m.saveNamesLocked(); err != nil {
			m.mu.Unlock()
			return fmt.Errorf("module %s: %w", ref, err)
		}
	}
	m.mu.Unlock()
	if err := os.Remove(m.moduleFile(id)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("module %s: %w", ref, err)
	}
	return nil
}

// lookupModule finds a module this manager has compiled; with shared
// modules, one it has not is fetched from the shared store.
func (m *Manager) lookupModule(id string) (*moduleEntry, bool) {
	m.mu.Lock()
	e, ok := m.modules[id]
	m.mu.Unlock()
	if ok || m.shared == nil {
		return e, ok
	}
	return m.fetchMissing(id) // modules_shared.go
}

// hostModule finds an uploaded module's compiled code.
func (m *Manager) hostModule(id string) (*host.Module, bool) {
	e, ok := m.lookupModule(id)
	if !ok {
		return nil, false
	}
	return e.mod, true
}

// lookupDescription finds an uploaded module's self-description.
func (m *Manager) lookupDescription(id string) (abi.Description, bool) {
	e, ok := m.lookupModule(id)
	if !ok {
		return abi.Description{}, false
	}
	return e.desc, true
}

// usedByLocked lists the jobs not yet in a terminal state that use module id.
func (m *Manager) usedByLocked(id string) []string {
	var users []string
	for _, j := range m.jobs {
		if j.state().Terminal() {
			continue
		}
		for _, mid := range j.modules {
			if mid == id {
				users = append(users, j.id)
			}
		}
	}
	sort.Strings(users)
	return users
}
