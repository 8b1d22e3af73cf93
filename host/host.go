package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// Config configures a Host.
type Config struct {
	// CacheDir is the directory of the on-disk compilation cache, shared by
	// every Host pointed at it; "" keeps compiled code in memory only.
	CacheDir string
	// Logger receives guest logs, stdout and stderr; nil means slog.Default().
	Logger *slog.Logger
	// MemoryBudget bounds the linear memory of all the Host's instances
	// together, in bytes; 0 (or less) means DefaultMemoryBudget(). An
	// instantiation or a memory.grow beyond it fails the call with a
	// *CallError of KindMemoryLimit.
	MemoryBudget int64
}

// Host compiles modules and runs their instances. It keeps one wazero
// runtime per distinct memory limit, all sharing one compilation cache.
type Host struct {
	log   *slog.Logger
	cache wazero.CompilationCache
	epoch time.Time
	// imports are the host functions a guest may import, by module and
	// name, with the signatures they must have.
	imports map[string]map[string]api.FunctionDefinition
	closed  atomic.Bool
	// validateTimeout bounds a module's validation calls.
	validateTimeout time.Duration
	// limits bound what a module may declare (limits.go).
	limits moduleLimits

	// budget bounds the instances' memories (linearmem.go); mapMemory
	// says whether they are mappings (else Go slices, which trim returns
	// to the OS once freed).
	budget    memoryBudget
	mapMemory bool
	trim      *trimmer

	mu      sync.Mutex
	engines map[uint32]*engine
	modules map[string]*moduleEntry
}

// moduleEntry is a Module by ID, compiled once for concurrent Compile calls
// of the same bytes: ready closes when mod or err is set.
type moduleEntry struct {
	ready chan struct{}
	mod   *Module
	err   error
}

// New creates a Host and its runtime for the default memory limit.
func New(ctx context.Context, cfg Config) (*Host, error) {
	h := &Host{
		log:             cfg.Logger,
		epoch:           time.Now(),
		validateTimeout: validateTimeout,
		limits:          defaultLimits,
		engines:         make(map[uint32]*engine),
		modules:         make(map[string]*moduleEntry),
		mapMemory:       mapMemoryDefault,
	}
	h.budget.limit = cfg.MemoryBudget
	if h.budget.limit <= 0 {
		h.budget.limit = DefaultMemoryBudget()
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	if cfg.CacheDir == "" {
		h.cache = wazero.NewCompilationCache()
	} else {
		c, err := wazero.NewCompilationCacheWithDir(cfg.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("host: compilation cache in %s: %w", cfg.CacheDir, err)
		}
		h.cache = c
	}
	e, err := h.engine(ctx, limitPages(DefaultMemoryLimit))
	if err != nil {
		return nil, errors.Join(err, h.cache.Close(ctx))
	}
	h.imports = allowedImports(e.rt)
	h.trim = startTrimmer(trimInterval)
	return h, nil
}

// MemoryBudget is the most linear memory, in bytes, the Host's instances
// may hold together.
func (h *Host) MemoryBudget() int64 { return h.budget.limit }

// MemoryReserved is the linear memory, in bytes, the Host's instances hold
// now, idle ones included. It may be read from any goroutine.
func (h *Host) MemoryReserved() int64 { return h.budget.used.Load() }

// Close closes every runtime, and so every instance, then the cache. Pools
// still open fail their next Call.
func (h *Host) Close(ctx context.Context) error {
	if h.closed.Swap(true) {
		return nil
	}
	h.trim.stop()
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	for pages, e := range h.engines {
		if err := e.rt.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("host: close runtime for %d pages: %w", pages, err))
		}
	}
	if err := h.cache.Close(ctx); err != nil {
		errs = append(errs, fmt.Errorf("host: close compilation cache: %w", err))
	}
	return errors.Join(errs...)
}

var errHostClosed = errors.New("host closed")

// engine returns the runtime for a memory limit in pages, creating it on
// first use.
func (h *Host) engine(ctx context.Context, pages uint32) (*engine, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed.Load() {
		return nil, errHostClosed
	}
	if e, ok := h.engines[pages]; ok {
		return e, nil
	}
	e, err := newEngine(ctx, h.cache, pages)
	if err != nil {
		return nil, err
	}
	h.engines[pages] = e
	return e, nil
}

// now is the time since the Host started, never zero: the clock of call
// deadlines.
func (h *Host) now() int64 { return int64(time.Since(h.epoch)) + 1 }
