package udf

import (
	"encoding/binary"
	"fmt"
	"time"
	"unicode/utf8"

	"wasmstream.io/platform/abi"
)

// Keyed state lives in the platform, not in the module: a state handle is
// only a name the module declares. Declare handles as package variables,
//
//	var seen = udf.ValueState("seen", udf.TTL(time.Hour))
//
// and use them inside Process and OnTimer functions, where they act on the
// current key, and inside ProcessWindowWithState functions, where they act on
// the current key's state in the window that fires. The module's self-description lists every declared state; a
// job may override its TTL (state_ttl in the job spec). Values a handle
// returns are valid until the next call of that handle: copy them to keep.

// StateOption configures a declared state.
type StateOption func(*stateDecl)

// TTL makes the state's entries expire ttl after they were last written
// (the job spec may change when and how; see docs/JOBS.md).
func TTL(ttl time.Duration) StateOption {
	if ttl <= 0 {
		panic(fmt.Sprintf("udf: state TTL %s is not positive", ttl))
	}
	return func(d *stateDecl) { d.ttl = ttl }
}

// stateDecl is one declared state.
type stateDecl struct {
	name string
	kind string
	ttl  time.Duration
	// broadcast marks a broadcast state (broadcast.go).
	broadcast bool
	// retired marks a state kept for MigrateState (migrate.go).
	retired bool
	// ttlMillis is the TTL the native harness applies.
	ttlMillis int64
}

// declare adds a state to the registry and returns its id.
func (g *registry) declare(name, kind string, opts []StateOption) uint32 {
	if name == "" || !utf8.ValidString(name) {
		panic(fmt.Sprintf("udf: state name %q is empty or not UTF-8", name))
	}
	for _, d := range g.states {
		if d.name == name {
			panic(fmt.Sprintf("udf: state %q declared twice (as %s, then as %s)", name, d.kind, kind))
		}
	}
	d := stateDecl{name: name, kind: kind}
	for _, o := range opts {
		o(&d)
	}
	d.ttlMillis = d.ttl.Milliseconds()
	g.states = append(g.states, d)
	return uint32(len(g.states) - 1)
}

func (g *registry) describeStates(b []byte) []byte {
	b = append(b, '[')
	for i, d := range g.states {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendJSONString(b, d.name)
		b = append(b, `,"kind":`...)
		b = appendJSONString(b, d.kind)
		if d.ttl > 0 {
			b = append(b, `,"ttl":`...)
			b = appendJSONString(b, d.ttl.String())
		}
		if d.broadcast {
			b = append(b, `,"broadcast":true`...)
		}
		if d.retired {
			b = append(b, `,"retired":true`...)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// buffer is a handle's result buffer: grown to what the platform reports.
type buffer []byte

// Reads that fill a buffer.
const (
	readValue = iota
	readList
	readMap
	readEntries
)

// read runs one buffer-filling host call.
func read(op int, id uint32, k, buf []byte) int32 {
	switch op {
	case readValue:
		return hostValueGet(id, buf)
	case readList:
		return hostListGet(id, buf)
	case readMap:
		return hostMapGet(id, k, buf)
	}
	return hostMapEntries(id, buf)
}

// fill runs a read into the buffer and, when the result did not fit, again
// into one large enough. It returns the result (nil, false for absent).
func (b *buffer) fill(op int, id uint32, k []byte) ([]byte, bool) {
	if *b == nil {
		*b = make([]byte, 256)
	}
	n := read(op, id, k, *b)
	if n < 0 {
		return nil, false
	}
	if int(n) > len(*b) {
		*b = make([]byte, n)
		n = read(op, id, k, *b)
	}
	return (*b)[:n], true
}

// StateValue is a value state: one value per key.
type StateValue struct {
	id  uint32
	buf buffer
}

// ValueState declares a value state.
func ValueState(name string, opts ...StateOption) *StateValue {
	return &StateValue{id: functions.declare(name, abi.StateValue, opts)}
}

// Get returns the current key's value, false when there is none.
func (v *StateValue) Get(ctx *Context) ([]byte, bool) {
	ctx.enter()
	return v.buf.fill(readValue, v.id, nil)
}

// Set sets the current key's value.
func (v *StateValue) Set(ctx *Context, value []byte) {
	ctx.enter()
	hostValueSet(v.id, value)
}

// Clear removes the current key's value.
func (v *StateValue) Clear(ctx *Context) {
	ctx.enter()
	hostStateClear(v.id)
}

// StateList is a list state: values appended one at a time, per key.
type StateList struct {
	id    uint32
	buf   buffer
	elems [][]byte
}

// ListState declares a list state.
func ListState(name string, opts ...StateOption) *StateList {
	return &StateList{id: functions.declare(name, abi.StateList, opts)}
}

// Append adds value at the end of the current key's list.
func (l *StateList) Append(ctx *Context, value []byte) {
	ctx.enter()
	hostListAppend(l.id, value)
}

// Get returns the current key's list, empty when there is none.
func (l *StateList) Get(ctx *Context) [][]byte {
	ctx.enter()
	data, _ := l.buf.fill(readList, l.id, nil)
	l.elems = l.elems[:0]
	for i, rest := uint32(0), counted(data); i < count(data); i++ {
		var e []byte
		e, rest = split(rest)
		l.elems = append(l.elems, e)
	}
	return l.elems
}

// Clear removes the current key's list.
func (l *StateList) Clear(ctx *Context) {
	ctx.enter()
	hostStateClear(l.id)
}

// StateMap is a map state: a map from keys to values, per key.
type StateMap struct {
	id      uint32
	buf     buffer
	all     buffer
	entries []MapEntry
}

// MapEntry is one entry of a map state.
type MapEntry struct {
	Key, Value []byte
}

// MapState declares a map state.
func MapState(name string, opts ...StateOption) *StateMap {
	return &StateMap{id: functions.declare(name, abi.StateMap, opts)}
}

// Get returns the value under k in the current key's map.
func (m *StateMap) Get(ctx *Context, k []byte) ([]byte, bool) {
	ctx.enter()
	return m.buf.fill(readMap, m.id, k)
}

// Put sets the value under k in the current key's map.
func (m *StateMap) Put(ctx *Context, k, value []byte) {
	ctx.enter()
	hostMapPut(m.id, k, value)
}

// Remove removes k from the current key's map.
func (m *StateMap) Remove(ctx *Context, k []byte) {
	ctx.enter()
	hostMapRemove(m.id, k)
}

// Entries returns the current key's map in key order.
func (m *StateMap) Entries(ctx *Context) []MapEntry {
	ctx.enter()
	data, _ := m.all.fill(readEntries, m.id, nil)
	m.entries = m.entries[:0]
	for i, rest := uint32(0), counted(data); i < count(data); i++ {
		var e MapEntry
		e.Key, rest = split(rest)
		e.Value, rest = split(rest)
		m.entries = append(m.entries, e)
	}
	return m.entries
}

// Clear removes the current key's map.
func (m *StateMap) Clear(ctx *Context) {
	ctx.enter()
	hostStateClear(m.id)
}

// count and counted split the platform's u32 count | (u32 length | bytes)*.
func count(b []byte) uint32 {
	if len(b) < 4 {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func counted(b []byte) []byte {
	if len(b) < 4 {
		return nil
	}
	return b[4:]
}

// split takes one u32 length | bytes off b; the platform wrote it, so it is
// well formed.
func split(b []byte) (head, rest []byte) {
	n := binary.LittleEndian.Uint32(b)
	return b[4 : 4+n : 4+n], b[4+n:]
}
