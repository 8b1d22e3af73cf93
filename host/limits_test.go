package host

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// withImportSection is wasm with an import section of the given imports (module,
// name and kind, each function of type 0, each global an immutable i32)
// before its function section.
func withImportSection(t testing.TB, wasm []byte, imports [][3]string) []byte {
	t.Helper()
	sections, err := splitSections(wasm)
	if err != nil {
		t.Fatal(err)
	}
	content := appendU32(nil, uint32(len(imports)))
	for _, im := range imports {
		content = appendName(appendName(content, im[0]), im[1])
		switch im[2] {
		case "func":
			content = append(content, externFunc, 0)
		case "global":
			content = append(content, externGlobal, 0x7f, 0)
		default:
			t.Fatalf("import kind %q", im[2])
		}
	}
	b := append([]byte(nil), wasmHeader...)
	for _, s := range sections {
		if s.id == secFunction {
			b = appendSection(b, secImport, content)
		}
		b = appendSection(b, s.id, s.content)
	}
	return b
}

// codeSize is the size of wasm's code section.
func codeSize(t *testing.T, wasm []byte) uint32 {
	t.Helper()
	sections, err := splitSections(wasm)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sections {
		if s.id == secCode {
			return uint32(len(s.content))
		}
	}
	t.Fatal("no code section")
	return 0
}

// TestModuleLimitsCodeAndImports: a module whose code section is larger
// than the limit, or that declares more imports than the limit, imports
// a reserved name or from a module or of a function the host does not
// provide, is refused before compiling with a problem naming the limit or the
// import; one at the limits is not. The limits are lowered so that the
// modules stay small.
func TestModuleLimitsCodeAndImports(t *testing.T) {
	h, _ := newHost(t, "")
	mod := manyFunctionsModule(20, 0, -1)
	size := codeSize(t, mod)
	wasi := func(name string) [3]string { return [3]string{"wasi_snapshot_preview1", name, "func"} }
	many := func(n int, im [3]string) [][3]string {
		ims := make([][3]string, n)
		for i := range ims {
			ims[i] = im
		}
		return ims
	}
	var unknown [][3]string
	for i := range maxImportProblems + 3 {
		unknown = append(unknown, [3]string{"env", fmt.Sprintf("f%d", i), "func"})
	}
	provided := `(it provides platform, wasi_snapshot_preview1)`
	tests := []struct {
		name   string
		limits moduleLimits
		wasm   []byte
		want   []string
	}{
		{"code at the limit", moduleLimits{MaxExports, MaxFunctions, size, MaxImports}, mod, nil},
		{"code one byte over", moduleLimits{MaxExports, MaxFunctions, size - 1, MaxImports}, mod,
			[]string{fmt.Sprintf("code section of %d bytes, more than the limit of %d per module", size, size-1)}},
		{"imports at the limit", moduleLimits{MaxExports, MaxFunctions, MaxCodeBytes, 3}, withImportSection(t, mod, many(3, wasi("fd_write"))), nil},
		{"one import more", moduleLimits{MaxExports, MaxFunctions, MaxCodeBytes, 3}, withImportSection(t, mod, many(4, wasi("fd_write"))),
			[]string{"4 imports, more than the limit of 3 per module"}},
		{"an unknown module", defaultLimits, withImportSection(t, mod, [][3]string{wasi("fd_write"), {"env", "memcpy", "func"}}),
			[]string{`import env.memcpy: module "env" is not provided by the host ` + provided}},
		{"a global of an unknown module", defaultLimits, withImportSection(t, mod, [][3]string{{"env", "g", "global"}}),
			[]string{`import env.g: module "env" is not provided by the host ` + provided}},
		{"an unknown function", defaultLimits, withImportSection(t, mod, [][3]string{wasi("sock_open"), wasi("fd_write"), {"platform", "bogus", "func"}}),
			[]string{"import wasi_snapshot_preview1.sock_open: not allowed", "import platform.bogus: not allowed"}},
		{"a reserved name", defaultLimits, withImportSection(t, mod, [][3]string{{"env", "platform_stop", "func"}}),
			[]string{"import env.platform_stop: name reserved by the platform"}},
		{"many unknown", defaultLimits, withImportSection(t, mod, unknown), append(func() []string {
			var want []string
			for i := range maxImportProblems {
				want = append(want, fmt.Sprintf(`import env.f%d: module "env" is not provided by the host %s`, i, provided))
			}
			return want
		}(), "and 3 more imports the host does not provide")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.limits.check(tt.wasm, h.imports); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("problems %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCompileRefusesUnknownImportEarly: Compile reports an import of a
// module the host does not provide by the import's name, before wazero
// compiles the module (whose own error would name the import's index).
func TestCompileRefusesUnknownImportEarly(t *testing.T) {
	h, _ := newHost(t, "")
	_, err := h.Compile(context.Background(), withImportSection(t, manyFunctionsModule(0, 0, -1), [][3]string{{"env", "abort", "func"}}))
	want := []string{`import env.abort: module "env" is not provided by the host (it provides platform, wasi_snapshot_preview1)`}
	var verr *ValidationError
	if !errors.As(err, &verr) || !reflect.DeepEqual(verr.Problems, want) {
		t.Fatalf("error %v, want the problems %q", err, want)
	}
}

// FuzzModuleLimits: the limits' check reads any bytes without panicking
// and lists at most one problem per limit of the sections other than
// imports, and maxImportProblems and a count of the others for imports.
func FuzzModuleLimits(f *testing.F) {
	mod := manyFunctionsModule(3, 1, -1)
	f.Add(mod)
	f.Add(withImportSection(f, mod, [][3]string{{"env", "f", "func"}, {"wasi_snapshot_preview1", "fd_write", "func"}, {"env", "g", "global"}}))
	f.Add(assemble(f, minimalWAT))
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	h, _ := newHost(f, "")
	limits := moduleLimits{exports: 4, functions: 4, codeBytes: 64, imports: 4}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		problems := limits.check(wasm, h.imports)
		if len(problems) > 3+maxImportProblems+1 {
			t.Fatalf("%d problems: %q", len(problems), problems)
		}
	})
}
