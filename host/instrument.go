package host

import (
	"bytes"
	"errors"
	"fmt"
	"math"
)

// Instrumentation makes guest calls stoppable without wazero's
// WithCloseOnContextDone, which exits to Go at every loop iteration. The
// host adds two mutable i32 globals to every module after its own, so that
// no index in the module shifts: the stop flag, exported as stopExport,
// and a budget. At the head of every loop, and on entry to every function
// that calls others (recursion and tail calls repeat code without a loop)
// unless a loop head comes first on every path, it inserts a check:
//
//	global.get $budget
//	i32.const 1
//	i32.sub
//	global.set $budget
//	global.get $budget
//	i32.eqz
//	if
//	  global.get $stop
//	  if
//	    unreachable
//	  end
//	  i32.const 4096
//	  global.set $budget
//	  i32.const 0   ;; only when the module has a memory
//	  memory.grow
//	  drop
//	  br 1          ;; only at a loop head whose block type is not a type index
//	end
//
// The common path is a decrement and a branch. Every 4096 checks the slow
// path traps if the watchdog has set the stop flag, and otherwise yields to
// Go: compiled Wasm cannot be preempted, so a guest that never left it
// would hold up every stop-the-world pause of the garbage collector, and
// with it the watchdog. wazero runs memory.grow in Go, which makes a grow
// by 0 pages a cheap exit that the scheduler can preempt. Branching back to
// the loop head after the slow path keeps the loop body a single path for
// wazero's compiler, which would otherwise reload values at the join.

// stopExport is the name of the stop flag's export. A module that exports
// or imports something of that name is refused.
const stopExport = "platform_stop"

var errReservedName = errors.New("name reserved by the platform")

// checkBudget is how many checks pass between two slow paths.
const checkBudget = 4096

// stopGlobals define the stop flag, a mutable i32 initialised to 0, and the
// budget, a mutable i32 initialised to checkBudget.
var stopGlobals = append(appendI32([]byte{0x7f, 0x01, 0x41, 0x00, opEnd, 0x7f, 0x01, 0x41}, checkBudget), opEnd)

// stopCheck is the check inserted in a module whose stop flag has index
// stop and budget stop+1, with a yield when the module has a memory and a
// branch back to the enclosing loop's head when loop is set.
func stopCheck(stop uint32, memory, loop bool) []byte {
	get := func(b []byte, g uint32) []byte { return appendU32(append(b, 0x23), g) }
	set := func(b []byte, g uint32) []byte { return appendU32(append(b, 0x24), g) }
	b := get(nil, stop+1)
	b = append(b, 0x41, 0x01, 0x6b) // i32.const 1, i32.sub
	b = set(b, stop+1)
	b = get(b, stop+1)
	b = append(b, 0x45, 0x04, 0x40) // i32.eqz, if
	b = get(b, stop)
	b = append(b, 0x04, 0x40, 0x00, opEnd, 0x41) // if, unreachable, end, i32.const
	b = set(appendI32(b, checkBudget), stop+1)
	if memory {
		b = append(b, 0x41, 0x00, 0x40, 0x00, 0x1a) // i32.const 0, memory.grow, drop
	}
	if loop {
		b = append(b, 0x0c, 0x01) // br 1
	}
	return append(b, opEnd)
}

// section is one section of a module.
type section struct {
	id byte
	// raw is the whole section; content follows its id and size, at
	// offset start in the module.
	raw, content []byte
	start        int
}

// moduleInfo is what the instrumenter needs to know of a module.
type moduleInfo struct {
	importedFuncs, importedGlobals, globals uint32
	hasGlobals, hasExports, hasMemory       bool
}

// instrument returns a copy of a module with a stop flag, a budget and
// their checks, without its .debug_* custom sections (their code offsets
// would be wrong). A module that uses the stop flag's name fails
// with errReservedName.
func instrument(wasm []byte) ([]byte, error) {
	sections, err := splitSections(wasm)
	if err != nil {
		return nil, fmt.Errorf("instrument: %w", err)
	}
	var info moduleInfo
	for _, s := range sections {
		if err := info.read(s); err != nil {
			if errors.Is(err, errReservedName) {
				return nil, err
			}
			return nil, fmt.Errorf("instrument: %w", err)
		}
	}
	stop := uint64(info.importedGlobals) + uint64(info.globals)
	if stop+1 > math.MaxUint32 {
		return nil, errors.New("instrument: too many globals")
	}
	w := moduleWriter{
		out:  append(make([]byte, 0, len(wasm)+len(wasm)/4+64), wasmHeader...),
		stop: uint32(stop), addGlobal: !info.hasGlobals, addExport: !info.hasExports,
		loopCheck:  stopCheck(uint32(stop), info.hasMemory, true),
		otherCheck: stopCheck(uint32(stop), info.hasMemory, false),
	}
	for _, s := range sections {
		if err := w.section(s, info.importedFuncs); err != nil {
			return nil, fmt.Errorf("instrument: %w", err)
		}
	}
	w.addMissing(len(sectionRank))
	return w.out, nil
}

// splitSections checks the header and the section order and returns the
// sections.
func splitSections(wasm []byte) ([]section, error) {
	if !bytes.HasPrefix(wasm, wasmHeader) {
		return nil, errors.New("not a WebAssembly 1.0 binary")
	}
	r := wasmReader{buf: wasm, pos: len(wasmHeader)}
	var sections []section
	rank := 0
	for !r.done() {
		at := r.offset()
		id, err := r.byte()
		if err != nil {
			return nil, err
		}
		if int(id) >= len(sectionRank) {
			return nil, fmt.Errorf("at byte %d: unknown section id %d", at, id)
		}
		if id != secCustom {
			if sectionRank[id] <= rank {
				return nil, fmt.Errorf("at byte %d: section %d out of order", at, id)
			}
			rank = sectionRank[id]
		}
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		start := r.offset()
		content, err := r.bytes(size)
		if err != nil {
			return nil, err
		}
		sections = append(sections, section{id: id, raw: wasm[at:r.pos], content: content, start: start})
	}
	return sections, nil
}

// read gathers what the instrumenter needs from a section.
func (m *moduleInfo) read(s section) error {
	r := &wasmReader{buf: s.content, base: s.start}
	switch s.id {
	case secImport:
		return m.readImports(r)
	case secGlobal:
		m.hasGlobals = true
		n, err := r.u32()
		m.globals = n
		return err
	case secExport:
		m.hasExports = true
		return readExports(r)
	case secMemory:
		n, err := r.u32()
		m.hasMemory = m.hasMemory || n > 0
		return err
	}
	return nil
}

func (m *moduleInfo) readImports(r *wasmReader) error {
	n, err := r.u32()
	for i := uint32(0); err == nil && i < n; i++ {
		var module, name []byte
		var kind byte
		if module, err = r.name(); err != nil {
			break
		}
		if name, err = r.name(); err != nil {
			break
		}
		if string(name) == stopExport {
			return fmt.Errorf("import %s.%s: %w", module, name, errReservedName)
		}
		if kind, err = r.byte(); err != nil {
			break
		}
		switch kind {
		case externFunc:
			m.importedFuncs++
			err = r.indexes(1)
		case externTable:
			if err = r.valueType(); err == nil {
				err = r.limits()
			}
		case externMemory:
			m.hasMemory = true
			err = r.limits()
		case externGlobal:
			m.importedGlobals++
			if err = r.valueType(); err == nil {
				_, err = r.byte()
			}
		case externTag:
			if _, err = r.byte(); err == nil {
				err = r.indexes(1)
			}
		default:
			err = r.errorf("unknown import kind 0x%02x", kind)
		}
	}
	return err
}

func readExports(r *wasmReader) error {
	n, err := r.u32()
	for i := uint32(0); err == nil && i < n; i++ {
		var name []byte
		if name, err = r.name(); err != nil {
			break
		}
		if string(name) == stopExport {
			return fmt.Errorf("export %s: %w", name, errReservedName)
		}
		if _, err = r.byte(); err == nil {
			err = r.indexes(1)
		}
	}
	return err
}
