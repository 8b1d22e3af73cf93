package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"

	"wasmstream.io/platform/abi"
)

// manyExportsDescription is the self-description of manyExportsModule.
const manyExportsDescription = `{"abi":1,"functions":[{"name":"f","kind":"map"}]}`

// manyExportsModule builds, byte by byte, a valid module with the ABI's
// exports (as minimalWAT) and n more exported functions of type () -> ()
// named e0, e1, ...; function f returns an empty output frame (at 2048).
func manyExportsModule(n int) []byte { return manyFunctionsModule(n, n, -1) }

// manyExportsModuleStart is manyExportsModule with function start (0
// platform_abi_version, 1 platform_alloc, ...) as start function, none if
// negative.
func manyExportsModuleStart(n, start int) []byte { return manyFunctionsModule(n, n, start) }

// manyFunctionsModule is manyExportsModuleStart with n functions besides
// the ABI's, of which the first exported are exported.
func manyFunctionsModule(n, exported, start int) []byte { return codeModule(n, exported, start, 0) }

// codeModule is manyFunctionsModule with ops pairs of instructions
// (i32.const 1, drop: 3 bytes) in the body of each of the n functions.
func codeModule(n, exported, start, ops int) []byte {
	section := func(b []byte, id byte, content []byte) []byte { return appendSection(b, id, content) }
	vec := func(count int, items []byte) []byte { return append(appendU32(nil, uint32(count)), items...) }
	functype := func(params, results []byte) []byte {
		b := append([]byte{0x60}, appendU32(nil, uint32(len(params)))...)
		b = append(b, params...)
		b = appendU32(b, uint32(len(results)))
		return append(b, results...)
	}
	const i32, i64 = 0x7f, 0x7e
	var types []byte
	types = append(types, functype(nil, nil)...)                           // 0: () -> ()
	types = append(types, functype(nil, []byte{i32})...)                   // 1: () -> i32
	types = append(types, functype([]byte{i32}, []byte{i32})...)           // 2: (i32) -> i32
	types = append(types, functype(nil, []byte{i64})...)                   // 3: () -> i64
	types = append(types, functype([]byte{i32, i32, i32}, []byte{i64})...) // 4: (i32, i32, i32) -> i64

	funcs := []byte{1, 2, 3, 4}
	for range n {
		funcs = append(funcs, 0)
	}
	abiNames := []string{abi.ExportVersion, abi.ExportAlloc, abi.ExportDescribe, abi.ExportCall}
	exports := append(appendName(nil, abi.ExportMemory), externMemory, 0)
	for i, name := range abiNames {
		exports = appendU32(append(appendName(exports, name), externFunc), uint32(i))
	}
	for i := range exported {
		exports = appendU32(append(appendName(exports, fmt.Sprintf("e%d", i)), externFunc), uint32(len(abiNames)+i))
	}
	body := func(b []byte, code ...byte) []byte {
		code = append(append([]byte{0}, code...), opEnd) // no locals
		return append(appendU32(b, uint32(len(code))), code...)
	}
	var code []byte
	code = body(code, 0x41, 0x01)                                                                     // i32.const 1
	code = body(code, 0x41, 0x80, 0x08)                                                               // i32.const 1024
	code = body(code, append([]byte{0x42}, appendI32(nil, int32(len(manyExportsDescription)))...)...) // i64.const len
	code = body(code, append([]byte{0x42}, sleb64(2048<<32|4)...)...)                                 // an empty frame at 2048
	filler := bytes.Repeat([]byte{0x41, 0x01, 0x1a}, ops)                                             // i32.const 1, drop
	for range n {
		code = body(code, filler...)
	}
	data := append([]byte{0, 0x41, 0, opEnd}, appendName(nil, manyExportsDescription)...) // active, memory 0, offset 0

	b := append([]byte(nil), wasmHeader...)
	b = section(b, secType, vec(5, types))
	b = section(b, secFunction, vec(len(funcs), funcs))
	b = section(b, secMemory, []byte{1, 0, 1}) // one memory, min 1 page
	b = section(b, secExport, vec(1+len(abiNames)+exported, exports))
	if start >= 0 {
		b = section(b, secStart, appendU32(nil, uint32(start)))
	}
	b = section(b, secCode, vec(len(funcs), code))
	return section(b, secData, vec(1, data))
}

// TestStartFunctionType: a start function that takes parameters or returns
// results is refused, as wazero refuses it in a start section.
func TestStartFunctionType(t *testing.T) {
	h, _ := newHost(t, "")
	_, err := h.Compile(context.Background(), manyExportsModuleStart(0, 1))
	want := []string{"start function: signature (i32) -> (i32), want () -> ()"}
	var verr *ValidationError
	if !errors.As(err, &verr) || !reflect.DeepEqual(verr.Problems, want) {
		t.Fatalf("error %v, want the problems %q", err, want)
	}
}

// sleb64 encodes v as a signed LEB128 integer.
func sleb64(v int64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// TestValidateManyExports compiles modules with many exported functions
// besides the ABI's, up to MaxExports in all, and checks that each
// validates to its description and runs.
func TestValidateManyExports(t *testing.T) {
	h, _ := newHost(t, "")
	want := abi.Description{ABI: 1, Functions: []abi.Function{{Name: "f", Kind: abi.KindMap}}}
	for _, n := range []int{0, 1, 1000, MaxExports - abiExports} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			wasm := manyExportsModule(n)
			m, err := h.Compile(context.Background(), wasm)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m.Description, want) || m.Size != len(wasm) {
				t.Fatalf("description %+v size %d, want %+v %d", m.Description, m.Size, want, len(wasm))
			}
			p := newPool(t, m, InstanceConfig{})
			out, err := p.Call(context.Background(), 0, inputFrame(values("x")...))
			if err != nil {
				t.Fatal(err)
			}
			if want := []byte{0, 0, 0, 0}; !reflect.DeepEqual(out, want) {
				t.Fatalf("output %v, want %v", out, want)
			}
		})
	}
}

// abiExports and abiFunctions are what manyFunctionsModule declares
// besides its n functions: memory and the ABI's four functions.
const (
	abiExports   = 5
	abiFunctions = 4
)

// TestModuleLimits: a module above MaxExports or MaxFunctions is refused
// with a problem naming each limit it exceeds, and one at a limit is not;
// the limits are lowered here so that the modules stay small.
func TestModuleLimits(t *testing.T) {
	h, _ := newHost(t, "")
	h.limits = moduleLimits{exports: abiExports + 10, functions: abiFunctions + 20, codeBytes: MaxCodeBytes, imports: MaxImports}
	tests := []struct {
		name string
		wasm []byte
		want []string
	}{
		{"at both limits", manyFunctionsModule(20, 10, -1), nil},
		{"one export more", manyFunctionsModule(20, 11, -1), []string{"16 exports, more than the limit of 15 per module"}},
		{"one function more", manyFunctionsModule(21, 10, -1), []string{"25 functions, more than the limit of 24 per module"}},
		{"both", manyExportsModule(30), []string{
			"34 functions, more than the limit of 24 per module", "35 exports, more than the limit of 15 per module",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.Compile(context.Background(), tt.wasm)
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var verr *ValidationError
			if !errors.As(err, &verr) || !reflect.DeepEqual(verr.Problems, tt.want) {
				t.Fatalf("error %v, want the problems %q", err, tt.want)
			}
		})
	}
}

// TestModuleLimitsRefuseMillionExports: the module of a million exports
// is refused by the real limits, naming both.
func TestModuleLimitsRefuseMillionExports(t *testing.T) {
	h, _ := newHost(t, "")
	_, err := h.Compile(context.Background(), manyExportsModule(1_000_000))
	want := []string{
		"1000004 functions, more than the limit of 100000 per module",
		"1000005 exports, more than the limit of 100000 per module",
	}
	var verr *ValidationError
	if !errors.As(err, &verr) || !reflect.DeepEqual(verr.Problems, want) {
		t.Fatalf("error %v, want the problems %q", err, want)
	}
}

// BenchmarkValidateManyExports is Compile (instrumentation, compilation,
// validation) of modules with n exported functions besides the ABI's, on a
// fresh Host each time so that nothing is cached. Above MaxExports it runs
// twice: "limited" with the Host's limits, which refuse the module, and
// "unlimited" with them lifted, which compiles it as the host did before
// it had limits.
func BenchmarkValidateManyExports(b *testing.B) {
	for _, n := range []int{12_500, 25_000, 50_000, MaxExports - abiExports, 200_000, 1_000_000} {
		benchLimits(b, fmt.Sprint(n), manyExportsModule(n), n+abiExports > MaxExports)
	}
}

// BenchmarkValidateManyFunctions is BenchmarkValidateManyExports for
// modules of n functions besides the ABI's that export none of them.
func BenchmarkValidateManyFunctions(b *testing.B) {
	for _, n := range []int{MaxFunctions - abiFunctions, 2 * MaxFunctions} {
		benchLimits(b, fmt.Sprint(n), manyFunctionsModule(n, 0, -1), n+abiFunctions > MaxFunctions)
	}
}

// BenchmarkValidateLargeCode is BenchmarkValidateManyExports for modules
// of 1,000 functions besides the ABI's whose code section is about 4 MiB,
// 8 MiB less 4 KiB (at MaxCodeBytes) and 16 MiB.
func BenchmarkValidateLargeCode(b *testing.B) {
	for _, mib := range []int{4, 8, 16} {
		ops := (mib<<20 - 4<<10) / 1000 / 3
		wasm := codeModule(1000, 0, -1, ops)
		benchLimits(b, fmt.Sprintf("%dMiB", mib), wasm, mib > MaxCodeBytes>>20)
	}
}

// benchLimits runs Compile of wasm as name, under the Host's limits, which
// refuse it when over is set, and then, when over is set, with them lifted.
func benchLimits(b *testing.B, name string, wasm []byte, over bool) {
	if !over {
		b.Run(name, func(b *testing.B) { benchCompile(b, wasm, defaultLimits, false) })
		return
	}
	b.Run(name+"/limited", func(b *testing.B) { benchCompile(b, wasm, defaultLimits, true) })
	unlimited := moduleLimits{exports: math.MaxUint32, functions: math.MaxUint32, codeBytes: math.MaxUint32, imports: math.MaxUint32}
	b.Run(name+"/unlimited", func(b *testing.B) { benchCompile(b, wasm, unlimited, false) })
}

// benchCompile compiles wasm under limits on a new Host per iteration,
// expecting a *ValidationError when refused is set.
func benchCompile(b *testing.B, wasm []byte, limits moduleLimits, refused bool) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		h, err := New(ctx, Config{})
		if err != nil {
			b.Fatal(err)
		}
		h.limits = limits
		_, err = h.Compile(ctx, wasm)
		var verr *ValidationError
		if refused != errors.As(err, &verr) || (!refused && err != nil) {
			b.Fatalf("refused %v: error %v", refused, err)
		}
		if err := h.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
