package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/tetratelabs/wazero"

	"wasmstream.io/platform/abi"
)

// Module is a validated, compiled UDF module. It is compiled into the
// runtime of another memory limit when a Guest first needs it there. Compile
// returns the same *Module for the same bytes.
type Module struct {
	// ID is "sha256:" and the hex SHA-256 of the module's bytes.
	ID string
	// Description is the module's self-description.
	Description abi.Description
	// Size is the size in bytes of the module as given to Compile.
	Size int

	host *Host
	// wasm is the module instrumented (instrument.go), which every
	// runtime compiles.
	wasm     []byte
	minPages uint32

	mu       sync.Mutex
	compiled map[uint32]*compiled
}

// compiled is a Module compiled into the runtime of one memory limit, with
// the healthy instances kept idle for it.
type compiled struct {
	mod  *Module
	eng  *engine
	code wazero.CompiledModule

	mu   sync.Mutex
	idle []*instance
}

// maxIdle bounds the idle instances kept per module and memory limit.
const maxIdle = 4

// Compile validates a module, instruments it so that its calls can be
// stopped (instrument.go) and compiles it for the default memory limit; a
// module above MaxExports, MaxImports, MaxFunctions or MaxCodeBytes, or
// importing what the host does not provide, is refused before either. It
// keeps no reference to wasm. Problems with the module come back as a
// *ValidationError listing every problem found.
func (h *Host) Compile(ctx context.Context, wasm []byte) (*Module, error) {
	sum := sha256.Sum256(wasm)
	id := "sha256:" + hex.EncodeToString(sum[:])
	h.mu.Lock()
	if h.closed.Load() {
		h.mu.Unlock()
		return nil, fmt.Errorf("host: compile %s: %w", id, errHostClosed)
	}
	if e, ok := h.modules[id]; ok {
		h.mu.Unlock()
		select {
		case <-e.ready:
			return e.mod, e.err
		case <-ctx.Done():
			return nil, fmt.Errorf("host: compile %s: %w", id, ctx.Err())
		}
	}
	e := &moduleEntry{ready: make(chan struct{})}
	h.modules[id] = e
	h.mu.Unlock()

	e.mod, e.err = h.compile(ctx, id, wasm)
	if e.err != nil {
		h.mu.Lock()
		delete(h.modules, id)
		h.mu.Unlock()
	}
	close(e.ready)
	return e.mod, e.err
}

func (h *Host) compile(ctx context.Context, id string, wasm []byte) (*Module, error) {
	eng, err := h.engine(ctx, limitPages(DefaultMemoryLimit))
	if err != nil {
		return nil, fmt.Errorf("host: compile %s: %w", id, err)
	}
	if problems := h.limits.check(wasm, h.imports); len(problems) > 0 {
		return nil, &ValidationError{Problems: problems}
	}
	instrumented, err := instrument(wasm)
	if err != nil {
		return nil, uninstrumentable(ctx, eng, wasm, err)
	}
	code, err := eng.rt.CompileModule(ctx, instrumented)
	if err != nil {
		return nil, &ValidationError{Problems: []string{"not a valid module: " + err.Error()}}
	}
	problems := append(checkExports(code), checkImports(code, h.imports)...)
	if len(problems) > 0 {
		return nil, reject(ctx, code, problems)
	}
	m := &Module{
		ID:       id,
		Size:     len(wasm),
		host:     h,
		wasm:     instrumented,
		minPages: code.ExportedMemories()[abi.ExportMemory].Min(),
		compiled: make(map[uint32]*compiled),
	}
	c := &compiled{mod: m, eng: eng, code: code}
	desc, problems := c.validate(ctx)
	if len(problems) > 0 {
		return nil, reject(ctx, code, problems)
	}
	m.Description = desc
	m.compiled[eng.pages] = c
	return m, nil
}

// uninstrumentable reports a module that instrument refused with err: one
// that uses the stop flag's name, or else what wazero finds wrong with it,
// or, should wazero accept it, err.
func uninstrumentable(ctx context.Context, eng *engine, wasm []byte, err error) error {
	if errors.Is(err, errReservedName) {
		return &ValidationError{Problems: []string{err.Error()}}
	}
	code, cerr := eng.rt.CompileModule(ctx, wasm)
	if cerr != nil {
		return &ValidationError{Problems: []string{"not a valid module: " + cerr.Error()}}
	}
	return reject(ctx, code, []string{"unsupported module: " + err.Error()})
}

// reject releases the code of an invalid module and reports its problems.
func reject(ctx context.Context, code wazero.CompiledModule, problems []string) error {
	verr := &ValidationError{Problems: problems}
	if err := code.Close(ctx); err != nil {
		return errors.Join(verr, fmt.Errorf("host: release invalid module: %w", err))
	}
	return verr
}

// compiledFor returns the module compiled into the runtime of a memory limit
// in pages, compiling it on first use (a cache hit after Compile).
func (m *Module) compiledFor(ctx context.Context, pages uint32) (*compiled, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.compiled[pages]; ok {
		return c, nil
	}
	eng, err := m.host.engine(ctx, pages)
	if err != nil {
		return nil, err
	}
	code, err := eng.rt.CompileModule(ctx, m.wasm)
	if err != nil {
		return nil, fmt.Errorf("compile for %d pages: %w", pages, err)
	}
	c := &compiled{mod: m, eng: eng, code: code}
	m.compiled[pages] = c
	return c, nil
}

// take returns an idle instance, or nil.
func (c *compiled) take() *instance {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.idle)
	if n == 0 {
		return nil
	}
	inst := c.idle[n-1]
	c.idle[n-1] = nil
	c.idle = c.idle[:n-1]
	return inst
}

// release keeps a healthy instance idle, or closes it when the idle list is
// full or the host is closed.
func (c *compiled) release(ctx context.Context, inst *instance) error {
	c.mu.Lock()
	if len(c.idle) < maxIdle && !c.mod.host.closed.Load() {
		c.idle = append(c.idle, inst)
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	return inst.close(ctx)
}
