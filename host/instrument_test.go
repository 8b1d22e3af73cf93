package host

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// allFeatures are the features the instrumenter knows: WebAssembly 2.0 and
// wazero's experimental ones.
const allFeatures = api.CoreFeaturesV2 | experimental.CoreFeaturesThreads | experimental.CoreFeaturesTailCall |
	experimental.CoreFeaturesExtendedConst | experimental.CoreFeaturesExceptionHandling |
	experimental.CoreFeaturesTypedFunctionReferences

// assemble builds a test module with wat2wasm and feature flags.
func assemble(t testing.TB, src string, flags ...string) []byte {
	t.Helper()
	return buildWAT(t, "module", []byte(src), flags...)
}

// compileWith checks that wazero's compiler, with every feature the
// instrumenter knows, accepts a module.
func compileWith(t testing.TB, wasm []byte) {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCoreFeatures(allFeatures))
	defer rt.Close(ctx)
	if _, err := rt.CompileModule(ctx, wasm); err != nil {
		t.Fatalf("wazero refuses the instrumented module: %v", err)
	}
}

// checkWAT is the check in WAT, as instrument inserts it.
func checkWAT(memory, loop bool) string {
	s := `global.get $platform_budget i32.const 1 i32.sub global.set $platform_budget
	  global.get $platform_budget i32.eqz
	  if global.get $platform_stop if unreachable end i32.const 4096 global.set $platform_budget`
	if memory {
		s += " i32.const 0 memory.grow drop"
	}
	if loop {
		s += " br 1"
	}
	return s + " end\n"
}

// stopWAT declares the stop flag, the budget and the export instrument
// adds, last in a module.
const stopWAT = `(global $platform_stop (mut i32) (i32.const 0))
  (global $platform_budget (mut i32) (i32.const 4096))
  (export "platform_stop" (global $platform_stop))`

// markers are the markers of expand that name a function.
var markers = regexp.MustCompile(`\{(export|start) (\$\w+)\}`)

// expand makes the module a test case describes and the module instrument
// must make of it: {loop} marks a loop head, {typed} the head of a loop
// whose block type is a type index, {entry} a function entry, {export $f}
// the export of function $f under the name f (which instrument drops,
// declaring $f instead), {start $f} the start function, and {stop} the end
// of the module.
func expand(src string, memory bool) (plain, instrumented string) {
	var declared []string
	start := ""
	instrumented = markers.ReplaceAllStringFunc(src, func(m string) string {
		if parts := markers.FindStringSubmatch(m); parts[1] == "export" {
			declared = append(declared, parts[2])
		} else {
			start = parts[2]
		}
		return ""
	})
	plain = markers.ReplaceAllStringFunc(src, func(m string) string {
		parts := markers.FindStringSubmatch(m)
		if parts[1] == "export" {
			return fmt.Sprintf("(export %q)", parts[2][1:])
		}
		return "(start " + parts[2] + ")"
	})
	plain = strings.NewReplacer("{loop}", "", "{typed}", "", "{entry}", "", "{stop}", "").Replace(plain)
	stop := stopWAT
	if len(declared) > 0 {
		stop = "(elem declare func " + strings.Join(declared, " ") + ")\n  " + stop
	}
	if start != "" {
		stop += "\n  (export \"platform_start\" (func " + start + "))"
	}
	instrumented = strings.NewReplacer(
		"{loop}", checkWAT(memory, true),
		"{typed}", checkWAT(memory, false),
		"{entry}", checkWAT(memory, false),
		"{stop}", stop,
	).Replace(instrumented)
	return plain, instrumented
}

// TestInstrumentWAT instruments hand-written modules and compares the
// result byte for byte with the same modules written with their checks.
func TestInstrumentWAT(t *testing.T) {
	for _, tt := range watCases {
		t.Run(tt.name, func(t *testing.T) {
			plain, want := expand(tt.src, !tt.noMemory)
			got, err := instrument(assemble(t, plain, tt.flags...))
			if err != nil {
				t.Fatal(err)
			}
			if w := assemble(t, want, tt.flags...); !bytes.Equal(got, w) {
				t.Fatalf("instrumented module differs\n got %x\nwant %x", got, w)
			}
			compileWith(t, got)
		})
	}
}

// watCase is a module to instrument, in WAT with the markers of expand.
type watCase struct {
	name     string
	flags    []string
	noMemory bool
	src      string
}

var watCases = []watCase{
	{name: "blocks, loops, ifs and br_table", src: `(module
  (memory 1)
  (func $shapes {export $shapes} (param $n i32) (result i32)
    (local $i i32)
    (block $out
      (loop $a {loop}
        (br_if $out (i32.ge_u (local.get $i) (local.get $n)))
        (if (i32.and (local.get $i) (i32.const 1))
          (then (loop $b {loop} (br_if $b (i32.const 0))))
          (else (drop (block (result i32) (loop $c (result i32) {loop} (i32.const 7))))))
        (block $x
          (block $y
            (block $z
              (br_table $x $y $z (local.get $i)))
            (local.set $i (i32.add (local.get $i) (i32.const 1))))
          (local.set $i (i32.add (local.get $i) (i32.const 1))))
        (loop $d {loop} (loop $e {loop} (loop $f {loop})))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $a)))
    (loop $empty {loop})
    (local.get $i))
  {stop})`},
	{name: "calls and function entries", src: `(module
  (memory 1)
  (table 1 funcref)
  (elem (i32.const 0) $leaf)
  (func $leaf (result i32) (i32.const 1))
  (func $fib (param $n i32) (result i32) {entry}
    (if (result i32) (i32.lt_u (local.get $n) (i32.const 2))
      (then (local.get $n))
      (else (i32.add
        (call $fib (i32.sub (local.get $n) (i32.const 1)))
        (call $fib (i32.sub (local.get $n) (i32.const 2)))))))
  (func $loop_first (param $n i32) (result i32)
    (local $x i32)
    (local.set $x (i32.const 3))
    (block $done (loop $l {loop} (br_if $done (call $leaf)) (br $l)))
    (local.get $x))
  (func $branch_first (param $n i32) (result i32) {entry}
    (if (local.get $n) (then (return (i32.const 0))))
    (loop $l {loop} (br_if $l (i32.eqz (call $leaf))))
    (i32.const 1))
  (func $indirect (param i32) (result i32) {entry}
    (call_indirect (result i32) (local.get 0)))
  {stop})`},
	{name: "multi-value block types", src: `(module
  (memory 1)
  (func $swap {export $swap} (param i32 i32) (result i32 i32)
    (local.get 0) (local.get 1)
    (block (param i32 i32) (result i32 i32)
      (loop $l (param i32 i32) (result i32 i32) {typed}
        (if (param i32 i32) (result i32 i32) (i32.const 0)
          (then (br $l))
          (else)))))
  (func $pair {export $pair} (result i32 i64)
    (loop (result i32 i64) {typed} (i32.const 1) (i64.const 2)))
  {stop})`},
	{name: "memory access and constants", src: `(module
  (memory 1)
  (func $mem {export $mem} (param $p i32)
    (loop $l {loop}
      (i32.store offset=4 align=1 (local.get $p) (i32.load offset=65536 (local.get $p)))
      (i64.store32 offset=300 (local.get $p) (i64.load8_s (local.get $p)))
      (i64.store16 (local.get $p) (i64.load16_s (local.get $p)))
      (i64.store8 (local.get $p) (i64.load16_u (local.get $p)))
      (i64.store (local.get $p) (i64.load32_s (local.get $p)))
      (i64.store align=2 (local.get $p) (i64.load32_u (local.get $p)))
      (i64.store (local.get $p) (i64.load8_u (local.get $p)))
      (i64.store (local.get $p) (i64.load (local.get $p)))
      (i32.store8 (local.get $p) (i32.load8_s (local.get $p)))
      (i32.store16 (local.get $p) (i32.load16_s offset=2 (local.get $p)))
      (i32.store (local.get $p) (i32.load16_u (local.get $p)))
      (i32.store (local.get $p) (i32.load8_u offset=4294967295 (local.get $p)))
      (f32.store (local.get $p) (f32.load (local.get $p)))
      (f64.store align=4 (local.get $p) (f64.load (local.get $p)))
      (f32.store (local.get $p) (f32.const nan:0x200000))
      (f64.store (local.get $p) (f64.const -0x1.fffffffffffffp+1023))
      (i64.store (local.get $p) (i64.const -9223372036854775808))
      (i32.store (local.get $p) (i32.const -2147483648))
      (drop (memory.grow (memory.size)))
      (br_if $l (i32.eqz (local.get $p)))))
  {stop})`},
	{name: "bulk memory, tables and saturating truncation", src: `(module
  (memory 1)
  (table $t 2 funcref)
  (table $u 2 funcref)
  (data $d "abc")
  (elem $e func $f)
  (func $f)
  (func $bulk {export $bulk} (param $p i32) (result i32)
    (loop $l (result i32) {loop}
      (memory.init $d (local.get $p) (i32.const 0) (i32.const 3))
      (data.drop $d)
      (memory.copy (local.get $p) (i32.const 0) (i32.const 3))
      (memory.fill (local.get $p) (i32.const 0) (i32.const 3))
      (table.init $u $e (i32.const 0) (i32.const 0) (i32.const 1))
      (elem.drop $e)
      (table.copy $t $u (i32.const 0) (i32.const 0) (i32.const 1))
      (drop (table.grow $u (ref.null func) (i32.const 1)))
      (table.fill $u (i32.const 0) (ref.null func) (i32.const 1))
      (drop (i32.trunc_sat_f32_s (f32.const 1)))
      (drop (i32.trunc_sat_f32_u (f32.const 1)))
      (drop (i32.trunc_sat_f64_s (f64.const 1)))
      (drop (i32.trunc_sat_f64_u (f64.const 1)))
      (drop (i64.trunc_sat_f32_s (f32.const 1)))
      (drop (i64.trunc_sat_f32_u (f32.const 1)))
      (drop (i64.trunc_sat_f64_s (f64.const 1)))
      (drop (i64.trunc_sat_f64_u (f64.const 1)))
      (drop (i32.extend8_s (i32.const 1)))
      (drop (i64.extend32_s (i64.const 1)))
      (br_if $l (local.get $p))
      (table.size $u)))
  {stop})`},
	{name: "SIMD", src: `(module
  (memory 1)
  (func $simd {export $simd} (param $p i32) (result i32)
    (local $v v128)
    (loop $l (result i32) {loop}
      (local.set $v (v128.load offset=16 align=8 (local.get $p)))
      (local.set $v (v128.load8x8_s (local.get $p)))
      (local.set $v (v128.load32_zero (local.get $p)))
      (local.set $v (v128.load64_splat offset=70000 (local.get $p)))
      (local.set $v (v128.load8_lane 15 (local.get $p) (local.get $v)))
      (v128.store16_lane offset=2 3 (local.get $p) (local.get $v))
      (v128.store64_lane 1 (local.get $p) (local.get $v))
      (local.set $v (i8x16.shuffle 0 17 2 19 4 21 6 23 8 25 10 27 12 29 14 31
        (local.get $v) (v128.const i32x4 1 2 3 4)))
      (local.set $v (i32x4.add (local.get $v) (v128.const i64x2 -1 0x7fffffffffffffff)))
      (local.set $v (i16x8.replace_lane 7 (local.get $v) (i32.const 9)))
      (local.set $v (f64x2.promote_low_f32x4 (local.get $v)))
      (local.set $v (i32x4.trunc_sat_f64x2_u_zero (local.get $v)))
      (local.set $v (i8x16.swizzle (local.get $v) (i8x16.splat (i32.const 3))))
      (v128.store (local.get $p) (local.get $v))
      (br_if $l (i8x16.all_true (local.get $v)))
      (i32x4.extract_lane 3 (local.get $v))))
  {stop})`},
	{name: "reference types without memory", noMemory: true, src: `(module
  (table $t 1 funcref)
  (table $x 1 externref)
  (elem declare func $f)
  (func $f)
  (func $refs {export $refs} (param $e externref) (result i32)
    (loop $l {loop}
      (table.set $t (i32.const 0) (ref.func $f))
      (table.set $x (i32.const 0) (local.get $e))
      (br_if $l (ref.is_null (table.get $x (i32.const 0)))))
    (call_indirect $t (i32.const 0))
    (ref.is_null (select (result funcref) (ref.null func) (ref.func $f) (i32.const 1))))
  {stop})`},
	{name: "no globals, exports or memory", noMemory: true, src: `(module
  (func (loop $l {loop} (br $l)))
  {stop})`},
	{name: "imported globals, memory and function", src: `(module
  (import "env" "f" (func $f))
  (import "env" "g0" (global $g0 i32))
  (import "env" "mem" (memory 1))
  (import "env" "g1" (global $g1 (mut i64)))
  (import "env" "t" (table 1 funcref))
  (global $own (mut i32) (i32.const 5))
  (func $run {export $run} {entry}
    (call $f)
    (loop {loop} (br_if 0 (global.get $g0)))
    (global.set $own (i32.const 1))
    (global.set $g1 (i64.const 2)))
  {stop})`},
	{name: "every section", src: `(module
  (type $v (func))
  (import "env" "f" (func $imp (type $v)))
  (table 2 funcref)
  (memory 1 2)
  (global $g (mut i32) (i32.const 0))
  (export "memory" (memory 0))
  {start $init}
  (elem (i32.const 0) $init $imp)
  (func $init {entry} (call $imp) (data.drop $d))
  (data $d (i32.const 0) "hi")
  {stop})`},
	{name: "start, element and data count without globals or exports", src: `(module
  (type $v (func))
  (import "env" "f" (func $imp (type $v)))
  (table 2 funcref)
  (memory 1 2)
  {start $init}
  (elem (i32.const 0) $init $imp)
  (func $init {entry} (call $imp) (data.drop $d))
  (data $d (i32.const 0) "hi")
  {stop})`},
	{name: "a stop flag index of two bytes", src: `(module
  (memory 1)
  ` + strings.Repeat("(global i32 (i32.const 0))", 130) + `
  (func (loop $l {loop} (br $l)))
  {stop})`},
	{name: "tail calls", flags: []string{"--enable-tail-call"}, noMemory: true, src: `(module
  (type $t (func (param i32) (result i32)))
  (table 1 funcref)
  (elem (i32.const 0) $count)
  (func $count (param $n i32) (result i32) {entry}
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 0))
      (else (return_call $count (i32.sub (local.get $n) (i32.const 1))))))
  (func $down {export $down} (param $n i32) (result i32) {entry}
    (return_call_indirect (type $t) (local.get $n) (i32.const 0)))
  {stop})`},
	{name: "threads", flags: []string{"--enable-threads"}, src: `(module
  (memory 1 1 shared)
  (func $atomics {export $atomics} (param $p i32) (result i32)
    (loop $l {loop}
      (i32.atomic.store (local.get $p) (i32.const 1))
      (drop (i32.atomic.rmw.add offset=4 (local.get $p) (i32.const 1)))
      (drop (i64.atomic.rmw32.cmpxchg_u (local.get $p) (i64.const 0) (i64.const 1)))
      (drop (memory.atomic.notify (local.get $p) (i32.const 1)))
      (drop (memory.atomic.wait32 (local.get $p) (i32.const 1) (i64.const 0)))
      (atomic.fence)
      (br_if $l (i32.atomic.load8_u (local.get $p))))
    (i32.const 0))
  {stop})`},
}
