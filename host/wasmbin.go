package host

import (
	"fmt"
	"math"
)

// WebAssembly binary format: the pieces the instrumenter reads and writes.

// wasmHeader is the magic number and version 1 that start every module.
var wasmHeader = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// Section ids.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
	secTag       = 13
)

// sectionRank is the position a non-custom section must have among the
// others: strictly increasing through a module. The tag section comes
// between memory and global, the data count section between element and
// code.
var sectionRank = [...]int{
	secType: 1, secImport: 2, secFunction: 3, secTable: 4, secMemory: 5, secTag: 6,
	secGlobal: 7, secExport: 8, secStart: 9, secElement: 10, secDataCount: 11, secCode: 12, secData: 13,
}

// Import and export kinds.
const (
	externFunc   = 0x00
	externTable  = 0x01
	externMemory = 0x02
	externGlobal = 0x03
	externTag    = 0x04
)

// Reference value types of the typed function references proposal, each
// followed by a heap type.
const (
	typeRefNull = 0x63
	typeRef     = 0x64
)

// Maximum lengths of LEB128 encodings by the bits they carry.
const (
	leb32 = 5
	leb33 = 5
	leb64 = 10
)

// wasmReader reads part of a module. Its errors name the offset in the
// module of what it could not read.
type wasmReader struct {
	buf []byte
	pos int
	// base is the offset of buf[0] in the module.
	base int
}

// offset is the reader's position in the module.
func (r *wasmReader) offset() int { return r.base + r.pos }

func (r *wasmReader) errorf(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s", r.offset(), fmt.Sprintf(format, args...))
}

func (r *wasmReader) done() bool { return r.pos >= len(r.buf) }

func (r *wasmReader) byte() (byte, error) {
	if r.pos >= len(r.buf) {
		return 0, r.errorf("unexpected end")
	}
	b := r.buf[r.pos]
	r.pos++
	return b, nil
}

// peek returns the next byte without consuming it.
func (r *wasmReader) peek() (byte, error) {
	if r.pos >= len(r.buf) {
		return 0, r.errorf("unexpected end")
	}
	return r.buf[r.pos], nil
}

// bytes returns the next n bytes, which alias the module.
func (r *wasmReader) bytes(n uint32) ([]byte, error) {
	if uint64(n) > uint64(len(r.buf)-r.pos) {
		return nil, r.errorf("%d bytes past the end", uint64(n)-uint64(len(r.buf)-r.pos))
	}
	b := r.buf[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b, nil
}

// skip consumes n bytes.
func (r *wasmReader) skip(n uint32) error {
	_, err := r.bytes(n)
	return err
}

// u32 reads an unsigned LEB128 integer of at most 32 bits.
func (r *wasmReader) u32() (uint32, error) {
	start := r.pos
	var v uint64
	for i := range leb32 {
		b, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			if v > math.MaxUint32 {
				r.pos = start
				return 0, r.errorf("integer overflows 32 bits")
			}
			return uint32(v), nil
		}
	}
	r.pos = start
	return 0, r.errorf("integer longer than %d bytes", leb32)
}

// leb skips a LEB128 integer of at most max bytes, signed or not.
func (r *wasmReader) leb(max int) error {
	start := r.pos
	for range max {
		b, err := r.byte()
		if err != nil {
			return err
		}
		if b&0x80 == 0 {
			return nil
		}
	}
	r.pos = start
	return r.errorf("integer longer than %d bytes", max)
}

// name reads a length-prefixed name; it aliases the module.
func (r *wasmReader) name() ([]byte, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	return r.bytes(n)
}

// valueType skips a value type: one byte, or a reference type with its
// heap type.
func (r *wasmReader) valueType() error {
	b, err := r.byte()
	if err != nil {
		return err
	}
	if b == typeRefNull || b == typeRef {
		return r.leb(leb33)
	}
	return nil
}

// limits skips the limits of a table or memory.
func (r *wasmReader) limits() error {
	flags, err := r.byte()
	if err != nil {
		return err
	}
	if _, err := r.u32(); err != nil {
		return err
	}
	if flags&1 != 0 {
		_, err = r.u32()
	}
	return err
}

// appendU32 appends v as an unsigned LEB128 integer.
func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// appendI32 appends v as a signed LEB128 integer.
func appendI32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// appendName appends a length-prefixed name.
func appendName(b []byte, name string) []byte {
	return append(appendU32(b, uint32(len(name))), name...)
}

// appendSection appends a section with its id and size.
func appendSection(b []byte, id byte, content []byte) []byte {
	b = append(b, id)
	b = appendU32(b, uint32(len(content)))
	return append(b, content...)
}
