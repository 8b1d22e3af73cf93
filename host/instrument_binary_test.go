package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// Modules wat2wasm cannot write (typed function references, try_table)
// and malformed ones, assembled byte by byte.

// mark is where instrument inserts a check in a hand-assembled body.
type mark int

const (
	// atLoop is the head of a loop whose block type is not a type index.
	atLoop mark = iota
	// atOther is a function entry or the head of a loop whose block type
	// is a type index.
	atOther
)

// rawFunc is a hand-assembled function body: byte slices and marks.
type rawFunc []any

// assemble returns the body with its size, and its checks when checked.
func (f rawFunc) assemble(checked, memory bool) []byte {
	var body []byte
	for _, part := range f {
		switch p := part.(type) {
		case []byte:
			body = append(body, p...)
		case mark:
			if checked {
				body = append(body, stopCheck(0, memory, p == atLoop)...)
			}
		}
	}
	return append(appendU32(nil, uint32(len(body))), body...)
}

// rawModule is a hand-assembled module without globals or exports.
type rawModule struct {
	// before are the sections before the global section, after those
	// after the export section and before the code section.
	before, after [][]byte
	funcs         []rawFunc
	memory        bool
}

// assemble returns the module, or the module instrument must make of it.
func (m rawModule) assemble(instrumented bool) []byte {
	wasm := bytes.Clone(wasmHeader)
	for _, s := range m.before {
		wasm = append(wasm, s...)
	}
	if instrumented {
		wasm = appendSection(wasm, secGlobal, append([]byte{2}, stopGlobals...))
		wasm = appendSection(wasm, secExport, append(appendName([]byte{1}, stopExport), externGlobal, 0))
	}
	for _, s := range m.after {
		wasm = append(wasm, s...)
	}
	code := appendU32(nil, uint32(len(m.funcs)))
	for _, f := range m.funcs {
		code = append(code, f.assemble(instrumented, m.memory)...)
	}
	return appendSection(wasm, secCode, code)
}

func sec(id byte, content ...byte) []byte { return appendSection(nil, id, content) }

func TestInstrumentBinary(t *testing.T) {
	tests := []struct {
		name string
		m    rawModule
	}{
		{
			name: "typed function references",
			m: rawModule{
				before: [][]byte{
					sec(secType, 1, 0x60, 1, 0x7f, 1, 0x7f),
					sec(secFunction, 3, 0, 0, 0),
				},
				after: [][]byte{sec(secElement, 1, 0x03, 0x00, 1, 0)},
				funcs: []rawFunc{
					{[]byte{0, 0x20, 0, 0x0b}},
					{
						[]byte{1, 1, typeRefNull, 0}, // a local (ref null 0)
						[]byte{0xd2, 0, 0x21, 1},     // ref.func 0, local.set 1
						[]byte{0x20, 1, 0xd4, 0x1a},  // local.get 1, ref.as_non_null, drop
						[]byte{0x02, 0x40, 0x03, 0x40}, atLoop,
						[]byte{0x20, 1, 0xd5, 1, 0x1a, 0x0b, 0x0b}, // br_on_null 1
						[]byte{0x03, typeRefNull, 0}, atLoop,       // loop (result (ref null 0))
						[]byte{0xd0, 0, 0x0b, 0x1a},
						[]byte{0x20, 0, 0x02, typeRef, 0},    // block (result (ref 0))
						[]byte{0x20, 1, 0xd6, 0, 0x00, 0x0b}, // br_on_non_null 0
						[]byte{0x14, 0, 0x0b},                // call_ref 0
					},
					{[]byte{0}, atOther, []byte{0x20, 0, 0xd2, 0, 0x15, 0, 0x0b}}, // return_call_ref 0
				},
			},
		},
		{
			name: "try_table",
			m: rawModule{
				before: [][]byte{
					sec(secType, 4,
						0x60, 1, 0x7f, 0, // the tag's type
						0x60, 0, 1, 0x7f,
						0x60, 0, 0,
						0x60, 0, 2, 0x7f, 0x69), // (result i32 exnref)
					sec(secFunction, 3, 1, 2, 2),
					sec(secMemory, 1, 0, 1),
					sec(secTag, 1, 0, 0),
				},
				memory: true,
				funcs: []rawFunc{
					{
						[]byte{0, 0x02, 0x7f, 0x02, 0x40},
						[]byte{0x1f, 0x40, 2, 0x00, 0, 1, 0x02, 0}, // try_table (catch 0 1) (catch_all 0)
						[]byte{0x03, 0x40}, atLoop,
						[]byte{0x41, 7, 0x08, 0, 0x0b, 0x0b, 0x0b, 0x41, 0, 0x0b, 0x0b},
					},
					{
						[]byte{0, 0x02, 0x69},
						[]byte{0x1f, 0x40, 1, 0x03, 0}, // try_table (catch_all_ref 0)
						[]byte{0x41, 1, 0x08, 0, 0x0b, 0xd0, 0x69, 0x0b, 0x0a, 0x0b},
					},
					{
						[]byte{0, 0x02, 3},
						[]byte{0x1f, 0x40, 1, 0x01, 0, 0}, // try_table (catch_ref 0 0)
						[]byte{0x41, 1, 0x08, 0, 0x0b, 0x41, 0, 0xd0, 0x69, 0x0b, 0x1a, 0x1a},
						[]byte{0x03, 3}, atOther, // loop (type 3)
						[]byte{0x41, 0, 0xd0, 0x69, 0x0b, 0x1a, 0x1a, 0x0b},
					},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := instrument(tt.m.assemble(false))
			if err != nil {
				t.Fatal(err)
			}
			if want := tt.m.assemble(true); !bytes.Equal(got, want) {
				t.Fatalf("instrumented module differs\n got %x\nwant %x", got, want)
			}
			compileWith(t, got)
		})
	}
}

func TestInstrumentErrors(t *testing.T) {
	typeAndFunc := [][]byte{sec(secType, 1, 0x60, 0, 0), sec(secFunction, 1, 0)}
	body := func(code ...byte) []byte {
		m := rawModule{before: typeAndFunc, funcs: []rawFunc{{code}}}
		return m.assemble(false)
	}
	// The body's first byte, its locals, is at 22 in a module of body.
	tests := []struct {
		name string
		wasm []byte
		want string
	}{
		{"not a module", []byte("not a module"), "instrument: not a WebAssembly 1.0 binary"},
		{"unknown opcode", body(0, 0xff, 0x0b), "instrument: function 0: at byte 23: unknown opcode 0xff"},
		{"legacy try", body(0, 0x06, 0x40, 0x0b, 0x0b), "instrument: function 0: at byte 23: unknown opcode 0x06"},
		{"unknown 0xfc opcode", body(0, 0xfc, 18, 0x0b), "instrument: function 0: at byte 23: unknown opcode 0xfc 18"},
		{"unknown 0xfd opcode", body(0, 0xfd, 0x80, 0x02, 0x0b), "instrument: function 0: at byte 23: unknown opcode 0xfd 256"},
		{"unknown 0xfe opcode", body(0, 0xfe, 0x04, 0x0b), "instrument: function 0: at byte 23: unknown opcode 0xfe 4"},
		{"truncated memarg", body(0, 0x41, 0, 0x28, 0), "instrument: function 0: at byte 27: unexpected end"},
		{"overlong index", body(0, 0x20, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x0b), "instrument: function 0: at byte 24: integer longer than 5 bytes"},
		{"truncated locals", body(1, 5), "instrument: function 0: locals: at byte 24: unexpected end"},
		{"unknown catch kind", body(0, 0x1f, 0x40, 1, 0x04, 0, 0x0b, 0x0b), "instrument: function 0: at byte 27: unknown catch kind 0x04"},
		{
			"function index counts imports",
			append(append(bytes.Clone(wasmHeader), sec(secType, 1, 0x60, 0, 0)...),
				append(sec(secImport, 1, 1, 'm', 1, 'f', externFunc, 0), append(sec(secFunction, 1, 0), sec(secCode, 1, 2, 0, 0xff)...)...)...),
			"instrument: function 1: at byte 32: unknown opcode 0xff",
		},
		{
			"body past the section",
			append(append(bytes.Clone(wasmHeader), typeAndFunc[0]...), append(typeAndFunc[1], sec(secCode, 1, 9, 0, 0x0b)...)...),
			"instrument: function 0: at byte 22: 7 bytes past the end",
		},
		{
			"sections out of order",
			append(append(bytes.Clone(wasmHeader), typeAndFunc[1]...), typeAndFunc[0]...),
			"instrument: at byte 12: section 1 out of order",
		},
		{"unknown section", append(bytes.Clone(wasmHeader), 14, 0), "instrument: at byte 8: unknown section id 14"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := instrument(tt.wasm); err == nil || err.Error() != tt.want {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestInstrumentRefusesReservedName(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"export", `(module (func (export "platform_stop")))`, "export platform_stop: name reserved by the platform"},
		{"import", `(module (import "env" "platform_stop" (global i32)))`, "import env.platform_stop: name reserved by the platform"},
		{"start export", `(module (func (export "platform_start")))`, "export platform_start: name reserved by the platform"},
		{"start import", `(module (import "env" "platform_start" (func)))`, "import env.platform_start: name reserved by the platform"},
	}
	h, _ := newHost(t, "")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wasm := assemble(t, tt.src)
			if _, err := instrument(wasm); !errors.Is(err, errReservedName) || err.Error() != tt.want {
				t.Fatalf("instrument: error %v, want %q", err, tt.want)
			}
			_, err := h.Compile(context.Background(), wasm)
			var verr *ValidationError
			if !errors.As(err, &verr) || !reflect.DeepEqual(verr.Problems, []string{tt.want}) {
				t.Fatalf("Compile: error %v, want the problem %q", err, tt.want)
			}
		})
	}
}

// TestInstrumentRefusesInvalidMoves: instrument refuses the modules whose
// flaws it would hide from wazero by dropping an export or moving the start
// function, and Compile then reports what wazero finds wrong with them.
func TestInstrumentRefusesInvalidMoves(t *testing.T) {
	export := func(name string, index byte) []byte {
		return append(appendName(nil, name), externFunc, index)
	}
	module := func(after ...[]byte) []byte {
		m := rawModule{
			before: [][]byte{sec(secType, 1, 0x60, 0, 0), sec(secFunction, 1, 0)},
			after:  after,
			funcs:  []rawFunc{{[]byte{0, 0x0b}}},
		}
		return m.assemble(false)
	}
	exports := func(entries ...[]byte) []byte {
		return sec(secExport, append([]byte{byte(len(entries))}, bytes.Join(entries, nil)...)...)
	}
	tests := []struct{ name, instrument, wazero string }{
		{"duplicate export name", `instrument: export "a": duplicate name`, `section export: export[1] duplicates name "a"`},
		{"export name not UTF-8", `instrument: export "\xff": name is not UTF-8`, "section export: read export: export name is not valid UTF-8"},
		{"export of a function out of range", `instrument: export "a": function 5 of 1`, `unknown function for export["a"]`},
		{"start function out of range", `instrument: start function 3 of 1`, "invalid start function: func[3] has an invalid type"},
	}
	wasms := [][]byte{
		module(exports(export("a", 0), export("a", 0))),
		module(exports(export("\xff", 0))),
		module(exports(export("a", 5))),
		module(sec(secStart, 3)),
	}
	h, _ := newHost(t, "")
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := instrument(wasms[i]); err == nil || err.Error() != tt.instrument {
				t.Fatalf("instrument: error %v, want %q", err, tt.instrument)
			}
			_, err := h.Compile(context.Background(), wasms[i])
			var verr *ValidationError
			if want := []string{"not a valid module: " + tt.wazero}; !errors.As(err, &verr) || !reflect.DeepEqual(verr.Problems, want) {
				t.Fatalf("Compile: error %v, want the problems %q", err, want)
			}
		})
	}
}

// TestInstrumentCustomSections puts custom sections before, between and
// after all the others: instrument keeps them in order, but for the
// .debug_* ones, and instruments the rest as without them.
func TestInstrumentCustomSections(t *testing.T) {
	wasm := assemble(t, `(module
  (memory 1)
  (global $g (mut i32) (i32.const 1))
  (func $f (export "f") (loop $l (br_if $l (global.get $g)))))`, "--debug-names")
	sections, err := splitSections(wasm)
	if err != nil {
		t.Fatal(err)
	}
	if last := sections[len(sections)-1]; last.id != secCustom || !bytes.HasPrefix(last.content, []byte("\x04name")) {
		t.Fatal("wat2wasm --debug-names wrote no name section last")
	}
	custom := func(name string, payload ...byte) []byte {
		return appendSection(nil, secCustom, append(appendName(nil, name), payload...))
	}
	spliced := bytes.Clone(wasmHeader)
	var kept [][]byte
	for i := range len(sections) + 1 {
		keep := custom(fmt.Sprintf("custom%d", i), byte(i))
		spliced = append(append(spliced, custom(".debug_info", 1, 2, 3)...), keep...)
		kept = append(kept, keep)
		if i < len(sections) {
			spliced = append(spliced, sections[i].raw...)
			if sections[i].id == secCustom {
				kept = append(kept, sections[i].raw)
			}
		}
	}
	got, err := instrument(spliced)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := instrument(wasm)
	if err != nil {
		t.Fatal(err)
	}
	gotRest, gotCustoms := splitCustom(t, got)
	wantRest, _ := splitCustom(t, plain)
	if !bytes.Equal(gotRest, wantRest) {
		t.Fatalf("sections other than custom ones\n got %x\nwant %x", gotRest, wantRest)
	}
	if !reflect.DeepEqual(gotCustoms, kept) {
		t.Fatalf("custom sections\n got %x\nwant %x", gotCustoms, kept)
	}
	compileWith(t, got)
}

// splitCustom separates a module's custom sections from the rest.
func splitCustom(t *testing.T, wasm []byte) (rest []byte, customs [][]byte) {
	t.Helper()
	sections, err := splitSections(wasm)
	if err != nil {
		t.Fatal(err)
	}
	rest = bytes.Clone(wasmHeader)
	for _, s := range sections {
		if s.id == secCustom {
			customs = append(customs, s.raw)
		} else {
			rest = append(rest, s.raw...)
		}
	}
	return rest, customs
}
