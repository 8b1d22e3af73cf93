package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"wasmstream.io/platform/abi"
)

const (
	pageSize = 64 << 10
	maxPages = 1 << 16
)

// limitPages converts a memory limit in bytes to whole pages.
func limitPages(limit int64) uint32 {
	if limit >= maxPages*pageSize {
		return maxPages
	}
	return uint32(limit / pageSize)
}

// engine is the wazero runtime of one memory limit with the host modules
// instantiated in it.
type engine struct {
	pages uint32
	rt    wazero.Runtime
}

// newEngine creates a runtime. Its guests' calls are stopped through the
// stop flag the host adds to every module (instrument.go), not through
// WithCloseOnContextDone, which costs an exit to Go at every loop iteration
// and a goroutine per call.
func newEngine(ctx context.Context, cache wazero.CompilationCache, pages uint32) (*engine, error) {
	cfg := wazero.NewRuntimeConfigCompiler().
		WithCompilationCache(cache).
		WithMemoryLimitPages(pages).
		WithCloseOnContextDone(false)
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if err := instantiateHostModules(ctx, rt); err != nil {
		return nil, errors.Join(fmt.Errorf("host: runtime for %d pages: %w", pages, err), rt.Close(ctx))
	}
	return &engine{pages: pages, rt: rt}, nil
}

func instantiateHostModules(ctx context.Context, rt wazero.Runtime) error {
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return fmt.Errorf("instantiate %s: %w", wasi_snapshot_preview1.ModuleName, err)
	}
	i32 := api.ValueTypeI32
	b := rt.NewHostModuleBuilder(abi.HostModule).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(guestLog), []api.ValueType{i32, i32, i32}, nil).
		WithParameterNames("level", "ptr", "len").
		Export(abi.ImportLog)
	_, err := exportStateImports(b).Instantiate(ctx)
	if err != nil {
		return fmt.Errorf("instantiate %s: %w", abi.HostModule, err)
	}
	return nil
}

// wasiAllowed are the WASI preview 1 functions a guest may import. Without
// preopened directories or sockets the fd_* calls reach only stdin, stdout
// and stderr.
var wasiAllowed = []string{
	"args_get", "args_sizes_get", "environ_get", "environ_sizes_get",
	"clock_res_get", "clock_time_get",
	"fd_write", "fd_read", "fd_close", "fd_seek", "fd_fdstat_get", "fd_fdstat_set_flags",
	"fd_filestat_get", "fd_prestat_get", "fd_prestat_dir_name",
	"poll_oneoff", "proc_exit", "random_get", "sched_yield",
}

// allowedImports collects the definitions of the functions a guest may
// import from the host modules instantiated in rt.
func allowedImports(rt wazero.Runtime) map[string]map[string]api.FunctionDefinition {
	wasi := rt.Module(wasi_snapshot_preview1.ModuleName).ExportedFunctionDefinitions()
	allowed := make(map[string]api.FunctionDefinition, len(wasiAllowed))
	for _, name := range wasiAllowed {
		if d, ok := wasi[name]; ok {
			allowed[name] = d
		}
	}
	return map[string]map[string]api.FunctionDefinition{
		wasi_snapshot_preview1.ModuleName: allowed,
		abi.HostModule:                    rt.Module(abi.HostModule).ExportedFunctionDefinitions(),
	}
}
