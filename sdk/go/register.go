package udf

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"wasmstream.io/platform/abi"
)

// Record is one record: a key, a value, an event timestamp in milliseconds
// since the epoch, and headers.
type Record = abi.Record

// Header is one record header. A name may repeat.
type Header = abi.Header

// Map registers a map function: it returns exactly one record for each input
// record. The output is the returned record; returning the input with only
// its Value changed keeps the input's key, timestamp and headers.
func Map(name string, f func(Record) (Record, error)) {
	mustFunc(name, f == nil)
	functions.add(function{name: name, kind: abi.KindMap, mapFn: f})
}

// Filter registers a filter function: the input record is kept, unchanged,
// when f returns true. Changes f makes to the record are not kept.
func Filter(name string, f func(Record) (bool, error)) {
	mustFunc(name, f == nil)
	functions.add(function{name: name, kind: abi.KindFilter, filterFn: f})
}

// FlatMap registers a flat map function: it calls emit zero or more times for
// each input record. emit copies the record, so the same Record and buffers
// may be reused between calls of emit. If f returns an error, the records it
// emitted for that input are discarded and the error is reported instead.
// emit must not be called after f returns.
func FlatMap(name string, f func(r Record, emit func(Record)) error) {
	mustFunc(name, f == nil)
	functions.add(function{name: name, kind: abi.KindFlatMap, flatMapFn: f})
}

// Key registers a key selector: the returned bytes become the record's key.
func Key(name string, f func(Record) ([]byte, error)) {
	mustFunc(name, f == nil)
	functions.add(function{name: name, kind: abi.KindKey, keyFn: f})
}

// Timestamp registers a timestamp assigner: the returned milliseconds since
// the epoch become the record's event timestamp.
func Timestamp(name string, f func(Record) (int64, error)) {
	mustFunc(name, f == nil)
	functions.add(function{name: name, kind: abi.KindTimestamp, timestampFn: f})
}

func mustFunc(name string, isNil bool) {
	if isNil {
		panic(fmt.Sprintf("udf: function %q is nil", name))
	}
}

// function is one registered function: its name, its kind, and the user's
// function in the field of that kind. Its index in the registry is the
// function argument of platform_call.
type function struct {
	name        string
	kind        abi.Kind
	mapFn       func(Record) (Record, error)
	filterFn    func(Record) (bool, error)
	flatMapFn   func(Record, func(Record)) error
	keyFn       func(Record) ([]byte, error)
	timestampFn func(Record) (int64, error)
	// run handles a whole grouped frame itself (process.go).
	run func(c *caller, frame []byte) []byte
}

// registry is the list of registered functions, in registration order.
type registry struct {
	funcs []function
	// states are the declared states, in declaration order (state.go).
	states []stateDecl
}

// functions is the module's registry, filled by the package inits.
var functions registry

func (g *registry) add(f function) {
	if f.name == "" {
		panic("udf: a function needs a non-empty name")
	}
	if !utf8.ValidString(f.name) {
		panic(fmt.Sprintf("udf: function name %q is not valid UTF-8", f.name))
	}
	if i := g.lookup(f.name); i >= 0 {
		panic(fmt.Sprintf("udf: function %q registered twice (as %s, then as %s)", f.name, g.funcs[i].kind, f.kind))
	}
	g.funcs = append(g.funcs, f)
}

func (g *registry) lookup(name string) int {
	for i := range g.funcs {
		if g.funcs[i].name == name {
			return i
		}
	}
	return -1
}

// describe returns the module's self-description as JSON. It is encoded by
// hand: encoding/json would add about 400 KB to every module.
func (g *registry) describe() []byte {
	b := []byte(`{"abi":`)
	b = strconv.AppendInt(b, abi.Version, 10)
	b = append(b, `,"functions":[`...)
	for i, f := range g.funcs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendJSONString(b, f.name)
		b = append(b, `,"kind":`...)
		b = appendJSONString(b, string(f.kind))
		b = append(b, '}')
	}
	b = append(b, ']')
	if len(g.states) > 0 {
		b = g.describeStates(append(b, `,"states":`...))
	}
	return append(b, '}')
}

// appendJSONString appends s, valid UTF-8, as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
