package host

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tetratelabs/wazero/api"
)

// Limits on what a module may declare. Compile refuses a module above any
// before it instruments or compiles anything, reading only section sizes,
// the counts at the head of the export and function sections and the
// import section's names, so that the refusal takes microseconds however
// large the module is. wazero compiles every function of a module, at about
// 5 µs each however small (register allocation most of it) plus about half
// a microsecond per byte of code, and compiles no function lazily: the
// function count and the code's size are what bound an upload's compile
// time. The platform's own modules declare at most 7 exports, 22 imports,
// about 2,200 functions and 1.7 MB of code (Go).
const (
	// MaxExports is the most exports (of any kind) a module may declare.
	MaxExports = 100_000
	// MaxFunctions is the most functions a module may define, its
	// imported functions not counted: about half a second of compiling.
	MaxFunctions = 100_000
	// MaxCodeBytes is the largest code section (the function bodies) a
	// module may have: a few seconds of compiling, four times the Go
	// SDK's modules.
	MaxCodeBytes = 8 << 20
	// MaxImports is the most imports a module may declare; the host
	// provides fewer than a hundred functions to import.
	MaxImports = 1_000
)

// maxImportProblems bounds the problems the import check lists; one more
// says how many it left out.
const maxImportProblems = 10

// moduleLimits are the limits a Host holds modules to, which tests lift
// or lower.
type moduleLimits struct {
	exports, functions, codeBytes, imports uint32
}

var defaultLimits = moduleLimits{exports: MaxExports, functions: MaxFunctions, codeBytes: MaxCodeBytes, imports: MaxImports}

// check names each limit the module exceeds and each import of a reserved
// name, or of a module or function the host does not provide (allowed, by
// module and name). A
// module it cannot split into sections, or whose counts or imports it
// cannot read, passes what it could not read: the instrumenter and wazero
// report what is wrong with it.
func (l moduleLimits) check(wasm []byte, allowed map[string]map[string]api.FunctionDefinition) []string {
	sections, err := splitSections(wasm)
	if err != nil {
		return nil
	}
	var problems []string
	for _, s := range sections {
		var what string
		var limit uint32
		switch s.id {
		case secImport:
			what, limit = "imports", l.imports
		case secExport:
			what, limit = "exports", l.exports
		case secFunction:
			what, limit = "functions", l.functions
		case secCode:
			if n := len(s.content); uint64(n) > uint64(l.codeBytes) {
				problems = append(problems, fmt.Sprintf("code section of %d bytes, more than the limit of %d per module", n, l.codeBytes))
			}
			continue
		default:
			continue
		}
		r := &wasmReader{buf: s.content, base: s.start}
		n, err := r.u32()
		if err != nil {
			continue
		}
		if n > limit {
			problems = append(problems, fmt.Sprintf("%d %s, more than the limit of %d per module", n, what, limit))
			continue
		}
		if s.id == secImport {
			problems = append(problems, checkImportNames(r, n, allowed)...)
		}
	}
	return problems
}

// checkImportNames reads the n imports at r and names each one of a name
// the platform reserves (as the instrumenter would), of a module the host
// does not provide, or of a function a provided module does not have.
// Signatures are checked after compiling (checkImports), with the module's
// other problems.
func checkImportNames(r *wasmReader, n uint32, allowed map[string]map[string]api.FunctionDefinition) []string {
	var problems []string
	unlisted := 0
	for range n {
		module, err := r.name()
		if err != nil {
			break
		}
		name, err := r.name()
		if err != nil {
			break
		}
		kind, err := r.byte()
		if err != nil || skipImportDesc(r, kind) != nil {
			break
		}
		var problem string
		switch _, known := allowed[string(module)]; {
		case string(name) == stopExport || string(name) == startExport:
			problem = fmt.Sprintf("import %s.%s: %v", module, name, errReservedName)
		case !known:
			problem = fmt.Sprintf("import %s.%s: module %q is not provided by the host (it provides %s)",
				module, name, module, strings.Join(slices.Sorted(maps.Keys(allowed)), ", "))
		case kind == externFunc && allowed[string(module)][string(name)] == nil:
			problem = fmt.Sprintf("import %s.%s: not allowed", module, name)
		default:
			continue
		}
		if len(problems) == maxImportProblems {
			unlisted++
			continue
		}
		problems = append(problems, problem)
	}
	if unlisted > 0 {
		problems = append(problems, fmt.Sprintf("and %d more imports the host does not provide", unlisted))
	}
	return problems
}

// skipImportDesc skips the description of an import of kind.
func skipImportDesc(r *wasmReader, kind byte) error {
	switch kind {
	case externFunc:
		_, err := r.u32()
		return err
	case externTable:
		if err := r.valueType(); err != nil {
			return err
		}
		return r.limits()
	case externMemory:
		return r.limits()
	case externGlobal:
		if err := r.valueType(); err != nil {
			return err
		}
		_, err := r.byte()
		return err
	case externTag:
		if _, err := r.byte(); err != nil {
			return err
		}
		_, err := r.u32()
		return err
	}
	return r.errorf("import kind %#x", kind)
}
