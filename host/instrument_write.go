package host

import (
	"bytes"
	"errors"
	"fmt"
	"math"
)

// moduleWriter writes the instrumented module.
type moduleWriter struct {
	out  []byte
	stop uint32
	// addGlobal and addExport are set while the module still needs a
	// global or export section of its own for the stop flag.
	addGlobal, addExport bool
	// loopCheck goes at loop heads whose block type is not a type index,
	// otherCheck at other loop heads and on entry.
	loopCheck, otherCheck []byte
	// hasStart says whether the module has a start function, start,
	// which the writer exports as startExport instead.
	hasStart bool
	start    uint32
	// declared are the functions of the exports dropped, for a
	// declarative element segment; addElement is set while the module
	// still needs an element section of its own for it.
	declared   []uint32
	addElement bool
}

// section writes a section of the module, instrumented.
func (w *moduleWriter) section(s section, importedFuncs uint32) error {
	if s.id != secCustom {
		w.addMissing(sectionRank[s.id])
	}
	switch s.id {
	case secCustom:
		r := wasmReader{buf: s.content, base: s.start}
		name, err := r.name()
		if err != nil {
			return fmt.Errorf("custom section name: %w", err)
		}
		if !bytes.HasPrefix(name, []byte(".debug_")) {
			w.out = append(w.out, s.raw...)
		}
	case secGlobal:
		content, err := appendEntries(s, 2, stopGlobals)
		if err != nil {
			return err
		}
		w.out = appendSection(w.out, secGlobal, content)
	case secExport:
		w.out = appendSection(w.out, secExport, w.exports(s))
	case secStart:
		// exported as startExport instead
	case secElement:
		if len(w.declared) == 0 {
			w.out = append(w.out, s.raw...)
			break
		}
		content, err := appendEntries(s, 1, w.declarative())
		if err != nil {
			return err
		}
		w.out = appendSection(w.out, secElement, content)
	case secCode:
		content, err := w.code(s, importedFuncs)
		if err != nil {
			return err
		}
		w.out = appendSection(w.out, secCode, content)
	default:
		w.out = append(w.out, s.raw...)
	}
	return nil
}

// addMissing writes the global and export sections of the stop flag when
// the module has none and the next section must follow them.
func (w *moduleWriter) addMissing(rank int) {
	if w.addGlobal && rank > sectionRank[secGlobal] {
		w.out = appendSection(w.out, secGlobal, append([]byte{2}, stopGlobals...))
		w.addGlobal = false
	}
	if w.addExport && rank > sectionRank[secExport] {
		w.out = appendSection(w.out, secExport, w.exports(section{}))
		w.addExport = false
	}
	if w.addElement && rank > sectionRank[secElement] {
		w.out = appendSection(w.out, secElement, append([]byte{1}, w.declarative()...))
		w.addElement = false
	}
}

// exports returns the content of the export section s (empty when the
// module has none) with only the function exports the host calls, and the
// stop flag's and start function's exports; it collects the functions of
// the others in declared. The section was read by moduleInfo.readExports.
func (w *moduleWriter) exports(s section) []byte {
	var kept []byte
	count := uint32(0)
	if s.content != nil {
		_ = forExports(s, func(name []byte, kind byte, index uint32, raw []byte) error {
			if kind == externFunc && !hostExports[string(name)] {
				w.declared = append(w.declared, index)
				return nil
			}
			kept = append(kept, raw...)
			count++
			return nil
		})
	}
	kept = appendU32(append(appendName(kept, stopExport), externGlobal), w.stop)
	count++
	if w.hasStart {
		kept = appendU32(append(appendName(kept, startExport), externFunc), w.start)
		count++
	}
	return append(appendU32(make([]byte, 0, len(kept)+leb32), count), kept...)
}

// declarative encodes a declarative element segment of the functions in
// declared: flags 3, element kind funcref, the function indexes.
func (w *moduleWriter) declarative() []byte {
	b := appendU32([]byte{0x03, 0x00}, uint32(len(w.declared)))
	for _, f := range w.declared {
		b = appendU32(b, f)
	}
	return b
}

// appendEntries returns the content of a vector section with n more
// entries, encoded in entries.
func appendEntries(s section, n uint32, entries []byte) ([]byte, error) {
	r := wasmReader{buf: s.content, base: s.start}
	count, err := r.u32()
	if err != nil {
		return nil, err
	}
	if count > math.MaxUint32-n {
		return nil, r.errorf("section %d is full", s.id)
	}
	content := appendU32(make([]byte, 0, len(s.content)+len(entries)+leb32), count+n)
	content = append(content, s.content[r.pos:]...)
	return append(content, entries...), nil
}

// code returns the content of the code section with the checks inserted.
// Function indexes in its errors count the imported functions.
func (w *moduleWriter) code(s section, importedFuncs uint32) ([]byte, error) {
	r := wasmReader{buf: s.content, base: s.start}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	out := appendU32(make([]byte, 0, len(s.content)+len(s.content)/4), n)
	var checks bodyChecks
	for i := range n {
		fn := uint64(importedFuncs) + uint64(i)
		size, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", fn, err)
		}
		start := r.offset()
		body, err := r.bytes(size)
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", fn, err)
		}
		if err := scanBody(&wasmReader{buf: body, base: start}, &checks); err != nil {
			return nil, fmt.Errorf("function %d: %w", fn, err)
		}
		if out, err = w.body(out, body, &checks); err != nil {
			return nil, fmt.Errorf("function %d: at byte %d: %w", fn, start, err)
		}
	}
	if !r.done() {
		return nil, r.errorf("%d bytes after the last function body", len(r.buf)-r.pos)
	}
	if uint64(len(out)) > math.MaxUint32 {
		return nil, errors.New("instrumented code section exceeds 4 GiB")
	}
	return out, nil
}

// body appends a function body, its size first, with its checks inserted.
func (w *moduleWriter) body(out, body []byte, c *bodyChecks) ([]byte, error) {
	size := uint64(len(body))
	if c.entry >= 0 {
		size += uint64(len(w.otherCheck))
	}
	for _, typed := range c.loopTyped {
		size += uint64(len(w.loopHead(typed)))
	}
	if size > math.MaxUint32 {
		return nil, errors.New("instrumented body exceeds 4 GiB")
	}
	out = appendU32(out, uint32(size))
	prev := 0
	if c.entry >= 0 {
		out = append(append(out, body[:c.entry]...), w.otherCheck...)
		prev = c.entry
	}
	for i, at := range c.loops {
		out = append(append(out, body[prev:at]...), w.loopHead(c.loopTyped[i])...)
		prev = at
	}
	return append(out, body[prev:]...), nil
}

// loopHead is the check for a loop head; typed says whether the loop's
// block type is a type index, which may give the loop parameters that a
// branch back to its head would need.
func (w *moduleWriter) loopHead(typed bool) []byte {
	if typed {
		return w.otherCheck
	}
	return w.loopCheck
}
