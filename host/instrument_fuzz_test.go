package host

import (
	"context"
	"errors"
	"testing"

	"github.com/tetratelabs/wazero"
)

// FuzzInstrument: instrument never panics, and for any module wazero
// accepts (with every feature the instrumenter knows) it either refuses
// the reserved name or returns a module wazero accepts too. wazero's
// interpreter runtime validates like its compiler, faster.
func FuzzInstrument(f *testing.F) {
	for _, tt := range watCases {
		plain, _ := expand(tt.src, !tt.noMemory)
		f.Add(assemble(f, plain, tt.flags...))
	}
	f.Add(fixture(f, "udf"))
	f.Add(assemble(f, minimalWAT))
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter().WithCoreFeatures(allFeatures))
	f.Cleanup(func() { rt.Close(ctx) })
	f.Fuzz(func(t *testing.T, wasm []byte) {
		out, err := instrument(wasm)
		if implausible(wasm) {
			return
		}
		code, cerr := rt.CompileModule(ctx, wasm)
		if cerr != nil {
			return
		}
		code.Close(ctx)
		if errors.Is(err, errReservedName) {
			return
		}
		if err != nil {
			t.Fatalf("instrument refuses a module wazero accepts: %v", err)
		}
		code, cerr = rt.CompileModule(ctx, out)
		if cerr != nil {
			t.Fatalf("wazero refuses the instrumented module: %v", cerr)
		}
		code.Close(ctx)
	})
}

// implausible reports whether wazero could allocate for an implausible
// count when it decodes a module: a vector longer than the bytes left, or
// more than maxLocals locals in a function. Such a module is invalid (or
// absurd), and wazero allocates for the count before it finds out, which a
// fuzzer turns into gigabytes. Anything this cannot read is implausible.
func implausible(wasm []byte) bool {
	sections, err := splitSections(wasm)
	if err != nil {
		return true
	}
	for _, s := range sections {
		r := &wasmReader{buf: s.content}
		var ok bool
		switch s.id {
		case secCustom:
			ok = plausibleCustom(r)
		case secStart, secDataCount:
			ok = true
		case secType:
			ok = plausibleVec(r, plausibleType)
		case secElement:
			ok = plausibleVec(r, plausibleElement)
		case secData:
			ok = plausibleVec(r, plausibleData)
		case secCode:
			ok = plausibleVec(r, plausibleLocals)
		default:
			ok = plausibleVec(r, func(*wasmReader) bool { return true })
		}
		if !ok {
			return true
		}
	}
	return false
}

// maxLocals bounds the locals of a plausible function.
const maxLocals = 1 << 16

// plausibleCount reads a count that must not exceed the bytes left.
func plausibleCount(r *wasmReader) (uint32, bool) {
	n, err := r.u32()
	return n, err == nil && uint64(n) <= uint64(len(r.buf)-r.pos)
}

// plausibleVec checks a vector's count and, while item reads them, its
// items; an item reader that stops early ends the check.
func plausibleVec(r *wasmReader, item func(*wasmReader) bool) bool {
	n, ok := plausibleCount(r)
	for i := uint32(0); ok && i < n && !r.done(); i++ {
		ok = item(r)
	}
	return ok
}

func plausibleType(r *wasmReader) bool {
	form, err := r.byte()
	if err != nil {
		return false
	}
	if form == 0x4e { // a recursive group
		return plausibleVec(r, plausibleType)
	}
	for range 2 { // parameters, then results
		if !plausibleVec(r, valueTypeOK) {
			return false
		}
	}
	return true
}

func valueTypeOK(r *wasmReader) bool { return r.valueType() == nil }

// constExprOK skips a constant expression.
func constExprOK(r *wasmReader) bool {
	for {
		op, _, err := r.instruction()
		if err != nil {
			return false
		}
		if op == opEnd {
			return true
		}
	}
}

func plausibleElement(r *wasmReader) bool {
	flags, err := r.u32()
	if err != nil || flags > 7 {
		return false
	}
	if flags&2 != 0 && flags&1 == 0 {
		if _, err := r.u32(); err != nil { // the table
			return false
		}
	}
	if flags&1 == 0 && !constExprOK(r) {
		return false
	}
	if flags&3 != 0 && !valueTypeOK(r) { // element kind or type
		return false
	}
	if flags&4 != 0 {
		return plausibleVec(r, constExprOK)
	}
	return plausibleVec(r, func(r *wasmReader) bool { return r.indexes(1) == nil })
}

func plausibleData(r *wasmReader) bool {
	flags, err := r.u32()
	if err != nil || flags > 2 {
		return false
	}
	if flags == 2 {
		if _, err := r.u32(); err != nil {
			return false
		}
	}
	if flags != 1 && !constExprOK(r) {
		return false
	}
	n, ok := plausibleCount(r)
	return ok && r.skip(n) == nil
}

// plausibleLocals checks the locals of a function body and skips it.
func plausibleLocals(r *wasmReader) bool {
	size, ok := plausibleCount(r)
	if !ok {
		return false
	}
	body, _ := r.bytes(size)
	b := &wasmReader{buf: body}
	groups, err := b.u32()
	if err != nil {
		return false
	}
	var sum uint64
	for range groups {
		n, err := b.u32()
		if err != nil || b.valueType() != nil {
			return false
		}
		if sum += uint64(n); sum > maxLocals {
			return false
		}
	}
	return true
}

// plausibleCustom checks the name section, the only custom section wazero
// decodes (its maps of function and local names).
func plausibleCustom(r *wasmReader) bool {
	name, err := r.name()
	if err != nil {
		return false
	}
	if string(name) != "name" {
		return true
	}
	nameOK := func(r *wasmReader) bool { return r.indexes(1) == nil && nameBytesOK(r) }
	for !r.done() {
		id, err := r.byte()
		if err != nil {
			return false
		}
		size, ok := plausibleCount(r)
		if !ok {
			return false
		}
		sub, _ := r.bytes(size)
		s := &wasmReader{buf: sub}
		switch id {
		case 1:
			ok = plausibleVec(s, nameOK)
		case 2:
			ok = plausibleVec(s, func(r *wasmReader) bool { return r.indexes(1) == nil && plausibleVec(r, nameOK) })
		}
		if !ok {
			return false
		}
	}
	return true
}

func nameBytesOK(r *wasmReader) bool {
	_, err := r.name()
	return err == nil
}
