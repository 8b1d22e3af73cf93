package host

import "fmt"

// Decoding function bodies: the instrumenter walks every instruction to find
// the loops, so it knows the immediates of every instruction wazero 1.12
// accepts: WebAssembly 2.0 (sign extension, non-trapping float-to-int,
// bulk memory, reference types, multi-value, SIMD) and the experimental
// tail calls, threads, exception handling (try_table; wazero refuses the
// legacy try) and typed function references.

const (
	opLoop = 0x03
	opEnd  = 0x0b
)

// bodyChecks are the places in a function body where stop checks go.
type bodyChecks struct {
	// loops are the offsets in the body right after each loop's block
	// type; loopTyped says which of those loops have a type index for
	// block type (and so may take parameters).
	loops     []int
	loopTyped []bool
	// entry is the offset of the body's code when the function needs a
	// check on entry, else -1.
	entry int
}

// scanBody walks a function body, its locals then its code, and finds
// where its checks go: one at the head of every loop, and one on entry
// when the function calls others (recursion and tail calls repeat code
// without a loop), unless a loop head is reached first on every path.
func scanBody(r *wasmReader, c *bodyChecks) error {
	c.loops, c.loopTyped, c.entry = c.loops[:0], c.loopTyped[:0], -1
	groups, err := r.u32()
	if err != nil {
		return fmt.Errorf("locals: %w", err)
	}
	for range groups {
		if _, err := r.u32(); err != nil {
			return fmt.Errorf("locals: %w", err)
		}
		if err := r.valueType(); err != nil {
			return fmt.Errorf("locals: %w", err)
		}
	}
	code := r.pos
	// straight is set while every instruction so far runs on every path
	// into the next; covered once a loop head is reached that way.
	straight, covered, calls := true, false, false
	for !r.done() {
		op, typed, err := r.instruction()
		if err != nil {
			return err
		}
		switch {
		case op == opLoop:
			covered = covered || straight
			c.loops = append(c.loops, r.pos)
			c.loopTyped = append(c.loopTyped, typed)
		case op >= 0x10 && op <= 0x15: // calls
			calls = true
		}
		straight = straight && !isControl(op)
	}
	if calls && !covered {
		c.entry = code
	}
	return nil
}

// isControl reports whether an instruction can branch, call, return or
// end a block: all but block and nop below 0x1a, try_table, br_on_null and
// br_on_non_null.
func isControl(op byte) bool {
	return op == 0x00 || (op >= 0x03 && op <= 0x19) || op == 0x1f || op == 0xd5 || op == 0xd6
}

// instruction skips one instruction and returns its opcode and, for a
// block, loop or if, whether its block type is a type index.
func (r *wasmReader) instruction() (op byte, typed bool, err error) {
	at := r.offset()
	if op, err = r.byte(); err != nil {
		return 0, false, err
	}
	switch op {
	case 0x00, 0x01, 0x05, 0x0a, 0x0b, 0x0f, 0x1a, 0x1b, 0xd1, 0xd4:
		// unreachable, nop, else, throw_ref, end, return, drop, select,
		// ref.is_null, ref.as_non_null
		return op, false, nil
	case 0x02, opLoop, 0x04: // block, loop, if
		typed, err = r.blockType()
		return op, typed, err
	case 0x08, 0x0c, 0x0d, 0x10, 0x12, 0x14, 0x15,
		0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x3f, 0x40, 0xd2, 0xd5, 0xd6:
		// throw, br, br_if, call, return_call, call_ref, return_call_ref,
		// local and global access, table.get/set, memory.size/grow,
		// ref.func, br_on_null, br_on_non_null
		return op, false, r.indexes(1)
	case 0x11, 0x13: // call_indirect, return_call_indirect
		return op, false, r.indexes(2)
	case 0x0e: // br_table
		n, err := r.u32()
		if err != nil {
			return op, false, err
		}
		return op, false, r.indexes(uint64(n) + 1)
	case 0x1c: // select with types
		n, err := r.u32()
		for i := uint32(0); err == nil && i < n; i++ {
			err = r.valueType()
		}
		return op, false, err
	case 0x1f:
		return op, false, r.tryTable()
	case 0x41: // i32.const
		return op, false, r.leb(leb32)
	case 0x42: // i64.const
		return op, false, r.leb(leb64)
	case 0x43: // f32.const
		return op, false, r.skip(4)
	case 0x44: // f64.const
		return op, false, r.skip(8)
	case 0xd0: // ref.null
		return op, false, r.leb(leb33)
	case 0xfc:
		return op, false, r.misc(at)
	case 0xfd:
		return op, false, r.simd(at)
	case 0xfe:
		return op, false, r.atomic(at)
	}
	switch {
	case op >= 0x28 && op <= 0x3e: // loads and stores
		return op, false, r.memarg()
	case op >= 0x45 && op <= 0xc4: // numeric instructions
		return op, false, nil
	}
	return op, false, fmt.Errorf("at byte %d: unknown opcode 0x%02x", at, op)
}

// blockType skips a block type: empty, a value type or a type index, and
// reports whether it was a type index.
func (r *wasmReader) blockType() (typed bool, err error) {
	b, err := r.peek()
	if err != nil {
		return false, err
	}
	if b == typeRefNull || b == typeRef {
		return false, r.valueType()
	}
	// A single byte with the sign bit (0x40) set is a negative s33: the
	// empty type or a value type. Type indexes are non-negative.
	return b&0xc0 != 0x40, r.leb(leb33)
}

// indexes skips n LEB128 indexes.
func (r *wasmReader) indexes(n uint64) error {
	for ; n > 0; n-- {
		if err := r.leb(leb32); err != nil {
			return err
		}
	}
	return nil
}

func (r *wasmReader) memarg() error { return r.indexes(2) }

// tryTable skips the block type and catch clauses of try_table.
func (r *wasmReader) tryTable() error {
	if _, err := r.blockType(); err != nil {
		return err
	}
	n, err := r.u32()
	for i := uint32(0); err == nil && i < n; i++ {
		var kind byte
		if kind, err = r.byte(); err != nil {
			break
		}
		switch kind {
		case 0x00, 0x01: // catch, catch_ref: tag and label
			err = r.indexes(2)
		case 0x02, 0x03: // catch_all, catch_all_ref: label
			err = r.indexes(1)
		default:
			err = r.errorf("unknown catch kind 0x%02x", kind)
		}
	}
	return err
}

// misc skips an instruction of the 0xfc prefix after the prefix.
func (r *wasmReader) misc(at int) error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	switch sub {
	case 0, 1, 2, 3, 4, 5, 6, 7: // saturating truncations
		return nil
	case 9, 11, 13, 15, 16, 17: // data.drop, memory.fill, elem.drop, table.grow/size/fill
		return r.indexes(1)
	case 8, 10, 12, 14: // memory.init, memory.copy, table.init, table.copy
		return r.indexes(2)
	}
	return fmt.Errorf("at byte %d: unknown opcode 0xfc %d", at, sub)
}

// simd skips an instruction of the 0xfd prefix after the prefix.
func (r *wasmReader) simd(at int) error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	switch {
	case sub <= 0x0b, sub == 0x5c, sub == 0x5d: // loads and stores
		return r.memarg()
	case sub == 0x0c, sub == 0x0d: // v128.const, i8x16.shuffle
		return r.skip(16)
	case sub >= 0x15 && sub <= 0x22: // extract and replace lane
		return r.skip(1)
	case sub >= 0x54 && sub <= 0x5b: // lane loads and stores
		if err := r.memarg(); err != nil {
			return err
		}
		return r.skip(1)
	case sub <= 0xff:
		return nil
	}
	return fmt.Errorf("at byte %d: unknown opcode 0xfd %d", at, sub)
}

// atomic skips an instruction of the 0xfe prefix after the prefix.
func (r *wasmReader) atomic(at int) error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	switch {
	case sub == 0x03: // atomic.fence
		return r.skip(1)
	case sub <= 0x02, sub >= 0x10 && sub <= 0x4e:
		return r.memarg()
	}
	return fmt.Errorf("at byte %d: unknown opcode 0xfe %d", at, sub)
}
