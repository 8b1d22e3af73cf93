package udfs

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"wasmstream.io/platform/abi"
)

// memoryLimitPages is the instances' memory limit: 64 MiB, a job's default.
const memoryLimitPages = 1024

// sandbox is the runtime the tests share: memory limited, and calls stop
// when their context is done.
var sandbox = sync.OnceValue(func() wazero.Runtime {
	return newRuntime(wazero.NewRuntimeConfig().WithMemoryLimitPages(memoryLimitPages).WithCloseOnContextDone(true))
})

// newRuntime makes a runtime with WASI and the platform's log import.
func newRuntime(cfg wazero.RuntimeConfig) wazero.Runtime {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	_, err := rt.NewHostModuleBuilder(abi.HostModule).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostLog), []api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32}, nil).
		Export(abi.ImportLog).
		Instantiate(ctx)
	if err != nil {
		panic(err)
	}
	return rt
}

// compiledKey names a module compiled in a runtime.
type compiledKey struct {
	rt   wazero.Runtime
	name string
}

var compiledModules struct {
	sync.Mutex
	m map[compiledKey]wazero.CompiledModule
}

// compiled is the module in directory name, built and compiled in rt once.
func compiled(tb testing.TB, rt wazero.Runtime, name string) wazero.CompiledModule {
	tb.Helper()
	compiledModules.Lock()
	defer compiledModules.Unlock()
	key := compiledKey{rt, name}
	if cm, ok := compiledModules.m[key]; ok {
		return cm
	}
	cm, err := rt.CompileModule(context.Background(), wasmOf(tb, name))
	if err != nil {
		tb.Fatal(err)
	}
	if compiledModules.m == nil {
		compiledModules.m = map[compiledKey]wazero.CompiledModule{}
	}
	compiledModules.m[key] = cm
	return cm
}

// logsKey is the context key of the *[]string that collects a call's log
// lines, each "<level> <message>".
type logsKey struct{}

func hostLog(ctx context.Context, m api.Module, stack []uint64) {
	msg, ok := m.Memory().Read(uint32(stack[1]), uint32(stack[2]))
	if !ok {
		panic("log message outside memory")
	}
	if logs, ok := ctx.Value(logsKey{}).(*[]string); ok {
		*logs = append(*logs, fmt.Sprintf("%d %s", int32(stack[0]), msg))
	}
}

// instance is one instance of a module, driven through the raw ABI.
type instance struct {
	mod   api.Module
	desc  abi.Description
	alloc api.Function
	call  api.Function
}

// instantiate makes a fresh instance of the module in directory name in the
// sandbox runtime.
func instantiate(tb testing.TB, name string) *instance {
	tb.Helper()
	return instantiateIn(tb, sandbox(), name)
}

// instantiateIn makes a fresh instance of the module in directory name in
// rt, runs _initialize, and reads its ABI version and self-description.
func instantiateIn(tb testing.TB, rt wazero.Runtime, name string) *instance {
	tb.Helper()
	ctx := context.Background()
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions(abi.ExportInitialize)
	mod, err := rt.InstantiateModule(ctx, compiled(tb, rt, name), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { mod.Close(ctx) })
	in := &instance{mod: mod, alloc: mod.ExportedFunction(abi.ExportAlloc), call: mod.ExportedFunction(abi.ExportCall)}
	version, err := mod.ExportedFunction(abi.ExportVersion).Call(ctx)
	if err != nil || uint32(version[0]) != abi.Version {
		tb.Fatalf("%s: abi version %v, %v", name, version, err)
	}
	packed, err := mod.ExportedFunction(abi.ExportDescribe).Call(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	desc, ok := mod.Memory().Read(abi.Unpack(packed[0]))
	if !ok {
		tb.Fatalf("%s: description outside memory", name)
	}
	if in.desc, err = abi.ParseDescription(desc); err != nil {
		tb.Fatal(err)
	}
	return in
}

// frame encodes records as an input frame.
func frame(recs []abi.Record) []byte {
	return abi.AppendFrame(nil, recs)
}

// run calls the named function over recs in one frame and returns its
// output entries, copied out of the instance's memory.
func (in *instance) run(ctx context.Context, fn string, recs []abi.Record) ([]abi.Entry, error) {
	index := in.desc.Lookup(fn)
	if index < 0 {
		return nil, fmt.Errorf("no function %q", fn)
	}
	f := frame(recs)
	res, err := in.alloc.Call(ctx, uint64(len(f)))
	if err != nil {
		return nil, err
	}
	return in.callAt(ctx, uint32(index), uint32(res[0]), f, uint32(len(recs)))
}

// callAt writes the frame f at ptr and calls function index over it.
func (in *instance) callAt(ctx context.Context, index, ptr uint32, f []byte, inputs uint32) ([]abi.Entry, error) {
	if !in.mod.Memory().Write(ptr, f) {
		return nil, fmt.Errorf("frame of %d bytes at %d is outside memory", len(f), ptr)
	}
	res, err := in.call.Call(ctx, uint64(index), uint64(ptr), uint64(len(f)))
	if err != nil {
		return nil, err
	}
	out, ok := in.mod.Memory().Read(abi.Unpack(res[0]))
	if !ok {
		return nil, fmt.Errorf("output frame outside memory")
	}
	return decode(out, inputs)
}

// decode copies the entries of an output frame. Empty byte slices are nil.
func decode(out []byte, inputs uint32) ([]abi.Entry, error) {
	var r abi.OutputReader
	if err := r.Reset(out, inputs); err != nil {
		return nil, err
	}
	var entries []abi.Entry
	var e abi.Entry
	for r.Next(&e) {
		c := abi.Entry{Tag: e.Tag, Index: e.Index, Flags: e.Flags, Timestamp: e.Timestamp,
			Key: clone(e.Key), Value: clone(e.Value), Message: clone(e.Message),
			Result: e.Result, Delete: e.Delete, Domain: e.Domain}
		for _, h := range e.Headers {
			c.Headers = append(c.Headers, abi.Header{Name: clone(h.Name), Value: clone(h.Value)})
		}
		entries = append(entries, c)
	}
	return entries, r.Err()
}

func clone(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return bytes.Clone(b)
}
