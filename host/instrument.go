package host

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"wasmstream.io/platform/abi"
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

// The instrumenter also moves the module's start function, if it has one,
// out of the start section into an export named startExport, which the
// host calls after instantiation, before _initialize, under the deadline
// of the instance's first call: a start section would run inside wazero's
// instantiation, before the stop flag can be reached, where nothing could
// stop it.
//
// And it keeps only the function exports the host calls (hostExports): the
// others are never called, and wazero builds its function definitions
// (for its export lists and for the stack trace of every trap) in time
// proportional to functions times function exports. A function whose
// export is dropped is declared in a declarative element segment instead,
// so that ref.func may still name it, as its export allowed.

// stopExport is the name of the stop flag's export, startExport that of
// the start function. A module that exports or imports something of
// either name is refused.
const (
	stopExport  = "platform_stop"
	startExport = "platform_start"
)

// hostExports are the function exports the host calls or checks; the
// instrumenter drops the others.
var hostExports = map[string]bool{
	abi.ExportVersion: true, abi.ExportAlloc: true, abi.ExportDescribe: true, abi.ExportCall: true,
	abi.ExportInitialize: true, "_start": true,
}

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
	importedFuncs, importedGlobals, globals, funcs uint32
	hasGlobals, hasExports, hasMemory, hasElements bool
	// hasStart says whether the module has a start function, start.
	hasStart bool
	start    uint32
	// dropped counts the function exports the instrumenter drops.
	dropped int
}

// checkIndexes checks the function indexes that instrument moves out of
// the sections where wazero would check them: the start function's and
// those of dropped exports, for the export section at r.
func (m *moduleInfo) checkIndexes(s section) error {
	total := uint64(m.importedFuncs) + uint64(m.funcs)
	if m.hasStart && uint64(m.start) >= total {
		return fmt.Errorf("start function %d of %d", m.start, total)
	}
	if s.id != secExport {
		return nil
	}
	return forExports(s, func(name []byte, kind byte, index uint32, _ []byte) error {
		if kind == externFunc && uint64(index) >= total {
			return fmt.Errorf("export %q: function %d of %d", name, index, total)
		}
		return nil
	})
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
	for _, s := range sections {
		if err := info.checkIndexes(s); err != nil {
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
		hasStart: info.hasStart, start: info.start,
		declared:   make([]uint32, 0, info.dropped),
		addElement: !info.hasElements && info.dropped > 0,
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
	case secFunction:
		n, err := r.u32()
		m.funcs = n
		return err
	case secExport:
		m.hasExports = true
		return m.readExports(s)
	case secStart:
		m.hasStart = true
		n, err := r.u32()
		m.start = n
		return err
	case secElement:
		m.hasElements = true
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
		if string(name) == stopExport || string(name) == startExport {
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

// readExports checks the export names, which wazero does not see for the
// exports instrument drops: valid UTF-8, unique, none reserved.
func (m *moduleInfo) readExports(s section) error {
	seen := make(map[string]struct{})
	return forExports(s, func(name []byte, kind byte, _ uint32, _ []byte) error {
		switch {
		case string(name) == stopExport || string(name) == startExport:
			return fmt.Errorf("export %s: %w", name, errReservedName)
		case !utf8.Valid(name):
			return fmt.Errorf("export %q: name is not UTF-8", name)
		}
		if _, dup := seen[string(name)]; dup {
			return fmt.Errorf("export %q: duplicate name", name)
		}
		seen[string(name)] = struct{}{}
		if kind == externFunc && !hostExports[string(name)] {
			m.dropped++
		}
		return nil
	})
}

// forExports calls fn with each entry of an export section: its name,
// kind, index and encoding.
func forExports(s section, fn func(name []byte, kind byte, index uint32, raw []byte) error) error {
	r := &wasmReader{buf: s.content, base: s.start}
	n, err := r.u32()
	for i := uint32(0); err == nil && i < n; i++ {
		at := r.pos
		var name []byte
		var kind byte
		var index uint32
		if name, err = r.name(); err != nil {
			break
		}
		if kind, err = r.byte(); err != nil {
			break
		}
		if index, err = r.u32(); err != nil {
			break
		}
		err = fn(name, kind, index, r.buf[at:r.pos])
	}
	if err == nil && !r.done() {
		err = r.errorf("%d bytes after the last export", len(r.buf)-r.pos)
	}
	return err
}
