package host

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
)

// minimalWAT is the smallest module that passes validation: one map
// function "f" whose calls return an empty frame at 0.
const minimalWAT = `(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"abi\":1,\"functions\":[{\"name\":\"f\",\"kind\":\"map\"}]}")
  (func (export "platform_abi_version") (result i32) (i32.const 1))
  (func (export "platform_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "platform_describe") (result i64) (i64.const 49))
  (func (export "platform_call") (param i32 i32 i32) (result i64) (i64.const 0))
)`

// edit is a replacement in minimalWAT.
type edit struct{ old, new string }

// withImports inserts import declarations at the start of the module.
func withImports(imports string) edit { return edit{"(module\n", "(module\n" + imports + "\n"} }

func TestCompileValidation(t *testing.T) {
	h, _ := newHost(t, "")
	tests := []struct {
		name     string
		wasm     []byte // used instead of minimalWAT when set
		edits    []edit
		problems []string // nil: valid
	}{
		{name: "minimal"},
		{
			name:  "reactor whose _start is never run",
			edits: []edit{withImports(`(func (export "_initialize")) (func (export "_start") unreachable)`)},
		},
		{
			name: "clang wasm32-wasi reactor imports",
			edits: []edit{withImports(`
  (import "wasi_snapshot_preview1" "clock_time_get" (func (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_fdstat_get" (func (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_seek" (func (param i32 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32)))
  (import "platform" "log" (func (param i32 i32 i32)))`)},
		},
		{
			name:     "garbage bytes",
			wasm:     []byte("not a module"),
			problems: []string{"not a valid module: invalid magic number"},
		},
		{
			name: "empty module",
			wasm: buildWAT(t, "empty", []byte("(module)")),
			problems: []string{
				"missing export memory",
				"missing export platform_abi_version () -> (i32)",
				"missing export platform_alloc (i32) -> (i32)",
				"missing export platform_describe () -> (i64)",
				"missing export platform_call (i32, i32, i32) -> (i64)",
			},
		},
		{
			name:     "missing memory",
			edits:    []edit{{`(memory (export "memory") 1)`, `(memory 1)`}},
			problems: []string{"missing export memory"},
		},
		{
			name:     "missing platform_abi_version",
			edits:    []edit{{`(func (export "platform_abi_version")`, `(func`}},
			problems: []string{"missing export platform_abi_version () -> (i32)"},
		},
		{
			name:     "missing platform_alloc",
			edits:    []edit{{`(func (export "platform_alloc")`, `(func`}},
			problems: []string{"missing export platform_alloc (i32) -> (i32)"},
		},
		{
			name:     "missing platform_describe",
			edits:    []edit{{`(func (export "platform_describe")`, `(func`}},
			problems: []string{"missing export platform_describe () -> (i64)"},
		},
		{
			name:     "missing platform_call",
			edits:    []edit{{`(func (export "platform_call")`, `(func`}},
			problems: []string{"missing export platform_call (i32, i32, i32) -> (i64)"},
		},
		{
			name: "wrong signatures",
			edits: []edit{
				{`"platform_alloc") (param i32)`, `"platform_alloc") (param i64)`},
				{`(param i32 i32 i32) (result i64) (i64.const 0)`, `(param i32 i32) (result i32) (i32.const 0)`},
			},
			problems: []string{
				"export platform_alloc: signature (i64) -> (i32), want (i32) -> (i32)",
				"export platform_call: signature (i32, i32) -> (i32), want (i32, i32, i32) -> (i64)",
			},
		},
		{
			name:     "_initialize with parameters",
			edits:    []edit{withImports(`(func (export "_initialize") (param i32))`)},
			problems: []string{"export _initialize: signature (i32) -> (), want () -> ()"},
		},
		{
			name:     "command module",
			edits:    []edit{withImports(`(func (export "_start"))`)},
			problems: []string{"exports _start but not _initialize: build a reactor (Go: -buildmode=c-shared)"},
		},
		{
			name:     "wrong abi version",
			edits:    []edit{{`(result i32) (i32.const 1)`, `(result i32) (i32.const 2)`}},
			problems: []string{"abi version 2, want 1"},
		},
		{
			name:     "truncated description",
			edits:    []edit{{`(i64.const 49)`, `(i64.const 10)`}},
			problems: []string{"self-description: unexpected end of JSON input"},
		},
		{
			name:     "description of another abi",
			edits:    []edit{{`\"abi\":1`, `\"abi\":2`}},
			problems: []string{"self-description: abi 2, want 1"},
		},
		{
			name: "wrong abi version and bad description",
			edits: []edit{
				{`(result i32) (i32.const 1)`, `(result i32) (i32.const 7)`},
				{`\"kind\":\"map\"`, `\"kind\":\"zap\"`},
			},
			problems: []string{"abi version 7, want 1", `self-description: function "f": unknown kind "zap"`},
		},
		{
			name:     "description outside memory",
			edits:    []edit{{`(i64.const 49)`, `(i64.const 0x10000000000031)`}},
			problems: []string{"platform_describe: location [1048576, 1048625) outside memory of 65536 bytes"},
		},
		{
			// Imports the host does not provide are named before
			// compiling.
			name: "an import of another module",
			edits: []edit{withImports(`
  (import "env" "system" (func (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open" (func (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))`)},
			problems: []string{
				`import env.system: module "env" is not provided by the host (it provides platform, wasi_snapshot_preview1)`,
				"import wasi_snapshot_preview1.path_open: not allowed",
			},
		},
		{
			name: "forbidden imports",
			edits: []edit{withImports(`
  (import "wasi_snapshot_preview1" "path_open" (func (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_accept" (func (param i32 i32 i32) (result i32)))`)},
			problems: []string{
				"import wasi_snapshot_preview1.path_open: not allowed",
				"import wasi_snapshot_preview1.sock_accept: not allowed",
			},
		},
		{
			// Signatures are checked after compiling, once every
			// import names a function the host provides.
			name: "host imports with wrong signatures",
			edits: []edit{withImports(`
  (import "platform" "log" (func (param i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func (param i32) (result i32)))`)},
			problems: []string{
				"import platform.log: signature (i32) -> (), want (i32, i32, i32) -> ()",
				"import wasi_snapshot_preview1.fd_write: signature (i32) -> (i32), want (i32, i32, i32, i32) -> (i32)",
			},
		},
		{
			name: "an unknown host import",
			edits: []edit{withImports(`
  (import "platform" "log" (func (param i32)))
  (import "platform" "state_get" (func (param i32) (result i32)))`)},
			problems: []string{"import platform.state_get: not allowed"},
		},
		{
			name:     "imported memory",
			edits:    []edit{{`(memory (export "memory") 1)`, `(import "env" "memory" (memory 1))`}},
			problems: []string{`import env.memory: module "env" is not provided by the host (it provides platform, wasi_snapshot_preview1)`},
		},
		{
			name:     "trap in _initialize",
			edits:    []edit{withImports(`(func (export "_initialize") unreachable)`)},
			problems: []string{"trap in _initialize: wasm error: unreachable\nwasm stack trace:\n\t.$0()"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wasm := tt.wasm
			if wasm == nil {
				src := minimalWAT
				for _, e := range tt.edits {
					if strings.Count(src, e.old) != 1 {
						t.Fatalf("edit %q does not match once", e.old)
					}
					src = strings.Replace(src, e.old, e.new, 1)
				}
				wasm = buildWAT(t, "module", []byte(src))
			}
			m, err := h.Compile(context.Background(), wasm)
			if tt.problems == nil {
				if err != nil {
					t.Fatal(err)
				}
				want := abi.Description{ABI: 1, Functions: []abi.Function{{Name: "f", Kind: abi.KindMap}}}
				if !reflect.DeepEqual(m.Description, want) || m.Size != len(wasm) {
					t.Fatalf("description %+v size %d, want %+v %d", m.Description, m.Size, want, len(wasm))
				}
				return
			}
			var verr *ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("error %v (%T), want *ValidationError", err, err)
			}
			if !reflect.DeepEqual(verr.Problems, tt.problems) {
				t.Fatalf("problems\n%q\nwant\n%q", verr.Problems, tt.problems)
			}
			if want := "invalid module: " + strings.Join(tt.problems, "; "); err.Error() != want {
				t.Fatalf("error %q, want %q", err, want)
			}
		})
	}
}
