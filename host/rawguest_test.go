package host

import (
	"context"
	"fmt"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"wasmstream.io/platform/abi"
)

// rawRuntime is a wazero runtime with the host modules, configured as the
// host's runtimes are, or, with closeOnDone, as they were before the host
// instrumented modules: calls stop when their context is done.
func rawRuntime(tb testing.TB, closeOnDone bool) wazero.Runtime {
	tb.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(closeOnDone))
	tb.Cleanup(func() { rt.Close(ctx) })
	if err := instantiateHostModules(ctx, rt); err != nil {
		tb.Fatal(err)
	}
	return rt
}

// rawGuest is a module instantiated straight in wazero and called the way a
// Guest calls it, without the host in between.
type rawGuest struct {
	mod         api.Module
	alloc, call api.Function
	ctx         context.Context
	// region and size are the input region platform_alloc returned last.
	region, size uint32
	stack        [3]uint64
}

// newRawGuest instantiates wasm in rt and runs its _initialize. Its calls
// get ctx.
func newRawGuest(tb testing.TB, ctx context.Context, rt wazero.Runtime, wasm []byte) *rawGuest {
	tb.Helper()
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions(abi.ExportInitialize)
	mod, err := rt.InstantiateWithConfig(ctx, wasm, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { mod.Close(context.Background()) })
	return &rawGuest{
		mod: mod, ctx: ctx,
		alloc: mod.ExportedFunction(abi.ExportAlloc), call: mod.ExportedFunction(abi.ExportCall),
	}
}

// describe returns the guest's self-description.
func (g *rawGuest) describe(tb testing.TB) abi.Description {
	tb.Helper()
	packed, err := g.mod.ExportedFunction(abi.ExportDescribe).Call(g.ctx)
	if err != nil {
		tb.Fatal(err)
	}
	data, ok := g.mod.Memory().Read(abi.Unpack(packed[0]))
	if !ok {
		tb.Fatal("self-description outside memory")
	}
	desc, err := abi.ParseDescription(data)
	if err != nil {
		tb.Fatal(err)
	}
	return desc
}

// run calls function fn over an input frame and returns the output frame,
// a view of guest memory.
func (g *rawGuest) run(fn int, frame []byte) ([]byte, error) {
	s := g.stack[:]
	mem := g.mod.Memory()
	if uint32(len(frame)) > g.size || g.size == 0 {
		s[0] = api.EncodeU32(uint32(len(frame)))
		if err := g.alloc.CallWithStack(g.ctx, s[:1]); err != nil {
			return nil, err
		}
		g.region, g.size = api.DecodeU32(s[0]), uint32(len(frame))
	}
	if !mem.Write(g.region, frame) {
		return nil, fmt.Errorf("region %d outside memory", g.region)
	}
	s[0], s[1], s[2] = api.EncodeU32(uint32(fn)), api.EncodeU32(g.region), api.EncodeU32(uint32(len(frame)))
	if err := g.call.CallWithStack(g.ctx, s); err != nil {
		return nil, err
	}
	out, ok := mem.Read(abi.Unpack(s[0]))
	if !ok {
		return nil, fmt.Errorf("output %x outside memory", s[0])
	}
	return out, nil
}
