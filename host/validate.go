package host

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"wasmstream.io/platform/abi"
)

// validateTimeout bounds the validation instance: its start function,
// _initialize, the ABI version and the self-description together
// (Host.validateTimeout, which tests lower).
const validateTimeout = 5 * time.Second

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

// exportSpec is a function export the ABI requires.
type exportSpec struct {
	name    string
	params  []api.ValueType
	results []api.ValueType
}

var requiredExports = []exportSpec{
	{abi.ExportVersion, nil, []api.ValueType{i32}},
	{abi.ExportAlloc, []api.ValueType{i32}, []api.ValueType{i32}},
	{abi.ExportDescribe, nil, []api.ValueType{i64}},
	{abi.ExportCall, []api.ValueType{i32, i32, i32}, []api.ValueType{i64}},
}

// checkExports names each required export that is missing or has another
// signature, and an _initialize or start function (moved to startExport by
// instrument, so wazero no longer checks its type) that is not () -> ().
func checkExports(code wazero.CompiledModule) []string {
	var problems []string
	if _, ok := code.ExportedMemories()[abi.ExportMemory]; !ok {
		problems = append(problems, "missing export memory")
	}
	fns := code.ExportedFunctions()
	for _, want := range requiredExports {
		d, ok := fns[want.name]
		if !ok {
			problems = append(problems, fmt.Sprintf("missing export %s %s", want.name, signature(want.params, want.results)))
			continue
		}
		if !sameSignature(d, want.params, want.results) {
			problems = append(problems, fmt.Sprintf("export %s: signature %s, want %s",
				want.name, signature(d.ParamTypes(), d.ResultTypes()), signature(want.params, want.results)))
		}
	}
	if d, ok := fns[abi.ExportInitialize]; ok && !sameSignature(d, nil, nil) {
		problems = append(problems, fmt.Sprintf("export %s: signature %s, want () -> ()",
			abi.ExportInitialize, signature(d.ParamTypes(), d.ResultTypes())))
	}
	if d, ok := fns[startExport]; ok && !sameSignature(d, nil, nil) {
		problems = append(problems, fmt.Sprintf("start function: signature %s, want () -> ()",
			signature(d.ParamTypes(), d.ResultTypes())))
	}
	if _, start := fns["_start"]; start {
		if _, init := fns[abi.ExportInitialize]; !init {
			problems = append(problems, "exports _start but not _initialize: build a reactor (Go: -buildmode=c-shared)")
		}
	}
	return problems
}

// checkImports names each import that is not one of the allowed host
// functions with its signature.
func checkImports(code wazero.CompiledModule, allowed map[string]map[string]api.FunctionDefinition) []string {
	var problems []string
	for _, d := range code.ImportedFunctions() {
		module, name, _ := d.Import()
		want, ok := allowed[module][name]
		if !ok {
			problems = append(problems, fmt.Sprintf("import %s.%s: not allowed", module, name))
			continue
		}
		if !sameSignature(d, want.ParamTypes(), want.ResultTypes()) {
			problems = append(problems, fmt.Sprintf("import %s.%s: signature %s, want %s", module, name,
				signature(d.ParamTypes(), d.ResultTypes()), signature(want.ParamTypes(), want.ResultTypes())))
		}
	}
	for _, d := range code.ImportedMemories() {
		module, name, _ := d.Import()
		problems = append(problems, fmt.Sprintf("import %s.%s: not allowed", module, name))
	}
	return problems
}

func sameSignature(d api.FunctionDefinition, params, results []api.ValueType) bool {
	return slices.Equal(d.ParamTypes(), params) && slices.Equal(d.ResultTypes(), results)
}

// signature formats a function type as "(i32, i32) -> (i64)".
func signature(params, results []api.ValueType) string {
	return "(" + typeList(params) + ") -> (" + typeList(results) + ")"
}

func typeList(types []api.ValueType) string {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = api.ValueTypeName(t)
	}
	return strings.Join(names, ", ")
}

// validate runs a module once: its start function, _initialize, the ABI
// version and the self-description, within the Host's validateTimeout
// (halted when ctx is done). Instantiation runs no guest code (see
// instantiate), so the halt covers every guest instruction validation
// runs; a halted call traps at its next check, and the instance is closed
// before validate returns.
func (c *compiled) validate(ctx context.Context) (abi.Description, []string) {
	timeout := c.mod.host.validateTimeout
	vctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	inst, err := c.instantiate(vctx)
	if err != nil {
		return abi.Description{}, []string{err.Error()}
	}
	stop := context.AfterFunc(vctx, inst.halt)
	desc, problems := inst.validate(func() string {
		if err := ctx.Err(); err != nil {
			return "validation stopped: " + err.Error()
		}
		return fmt.Sprintf("did not return within the validation deadline of %s", timeout)
	})
	stop()
	if err := inst.close(ctx); err != nil {
		problems = append(problems, err.Error())
	}
	return desc, problems
}

// validate makes the validation calls; deadline says why a halted call was
// stopped.
func (i *instance) validate(deadline func() string) (abi.Description, []string) {
	now := i.code.mod.host.now
	failure := func(kind ErrorKind, err error) []string {
		if kind == KindDeadline {
			return []string{fmt.Sprintf("%s in %s: %s", kind, i.function, deadline())}
		}
		return []string{string(kind) + " in " + err.Error()}
	}
	if kind, err := i.initialize(now()); err != nil {
		return abi.Description{}, failure(kind, err)
	}
	var problems []string
	stack := []uint64{0}
	if kind, err := i.invoke(abi.ExportVersion, stack, now()); err != nil {
		return abi.Description{}, failure(kind, err)
	}
	if v := int32(stack[0]); v != abi.Version {
		problems = append(problems, fmt.Sprintf("abi version %d, want %d", v, abi.Version))
	}
	if kind, err := i.invoke(abi.ExportDescribe, stack, now()); err != nil {
		return abi.Description{}, append(problems, failure(kind, err)...)
	}
	ptr, n := abi.Unpack(stack[0])
	data, ok := i.mem.Read(ptr, n)
	if !ok {
		return abi.Description{}, append(problems, fmt.Sprintf("%s: location [%d, %d) outside memory of %d bytes",
			abi.ExportDescribe, ptr, uint64(ptr)+uint64(n), i.mem.Size()))
	}
	desc, err := abi.ParseDescription(data)
	if err != nil {
		return abi.Description{}, append(problems, err.Error())
	}
	return desc, problems
}
