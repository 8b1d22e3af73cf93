package runtime

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
)

// moduleEntry is an uploaded, validated and compiled module.
type moduleEntry struct {
	id       string
	desc     abi.Description
	mod      *host.Module
	size     int
	uploaded time.Time
}

func (m *moduleEntry) info(usedBy []string) ModuleInfo {
	return ModuleInfo{ID: m.id, Size: m.size, Functions: m.desc.Functions, States: m.desc.States, Uploaded: m.uploaded, UsedBy: usedBy}
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
	return nil
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
	e, err := m.addModule(ctx, wasm, time.Now())
	if err != nil {
		return ModuleInfo{}, err
	}
	path := m.moduleFile(e.id)
	if _, err := os.Stat(path); err != nil {
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, wasm, 0o644); err != nil {
			return ModuleInfo{}, fmt.Errorf("module %s: store: %w", e.id, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return ModuleInfo{}, fmt.Errorf("module %s: store: %w", e.id, err)
		}
	}
	return e.info(m.usedBy(e.id)), nil
}

// ListModules lists the uploaded modules by upload time.
func (m *Manager) ListModules(context.Context) ([]ModuleInfo, error) {
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
	for i, e := range entries {
		out[i] = e.info(m.usedBy(e.id))
	}
	return out, nil
}

// GetModule describes one module.
func (m *Manager) GetModule(_ context.Context, id string) (ModuleInfo, error) {
	e, ok := m.lookupModule(id)
	if !ok {
		return ModuleInfo{}, fmt.Errorf("module %s: %w", id, ErrNotFound)
	}
	return e.info(m.usedBy(id)), nil
}

// DeleteModule removes a module no running job uses.
func (m *Manager) DeleteModule(_ context.Context, id string) error {
	m.mu.Lock()
	_, ok := m.modules[id]
	if !ok {
		m.mu.Unlock()
		return fmt.Errorf("module %s: %w", id, ErrNotFound)
	}
	if users := m.usedByLocked(id); len(users) > 0 {
		m.mu.Unlock()
		return fmt.Errorf("module %s is used by jobs %s: %w", id, strings.Join(users, ", "), ErrInUse)
	}
	delete(m.modules, id)
	m.mu.Unlock()
	if err := os.Remove(m.moduleFile(id)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("module %s: %w", id, err)
	}
	return nil
}

func (m *Manager) lookupModule(id string) (*moduleEntry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.modules[id]
	return e, ok
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

func (m *Manager) usedBy(id string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.usedByLocked(id)
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
