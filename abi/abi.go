// Package abi defines ABI v1 between the platform host and WebAssembly UDF
// modules: the names a module exports and imports, the function kinds, the
// self-description, and the frame codec that carries batches of records across
// the boundary. It is shared by the host and the Go SDK, so it imports nothing
// of the platform and compiles for GOOS=wasip1. docs/ABI.md is the spec.
package abi

// Version is the ABI version this package speaks. A module reports the
// version it was built for through ExportVersion.
const Version = 1

// Names a module exports.
const (
	// ExportMemory is the module's linear memory.
	ExportMemory = "memory"
	// ExportVersion is `() -> i32`: the ABI version the module was built for.
	ExportVersion = "platform_abi_version"
	// ExportAlloc is `(size i32) -> i32`: a region of at least size bytes
	// in which the host places the next input frame. It stays valid until
	// the next call of ExportAlloc.
	ExportAlloc = "platform_alloc"
	// ExportDescribe is `() -> i64`: the packed location (see Pack) of the
	// module's self-description, a JSON Description.
	ExportDescribe = "platform_describe"
	// ExportCall is `(function i32, ptr i32, len i32) -> i64`: runs the
	// function with that index in the Description over the input frame at
	// ptr and returns the packed location of its output frame, which stays
	// valid until the next call into the module.
	ExportCall = "platform_call"
	// ExportInitialize is the reactor initialiser; the host calls it once
	// per instance when present.
	ExportInitialize = "_initialize"
)

// Names a module may import from the platform.
const (
	// HostModule is the import module of the platform's host functions.
	HostModule = "platform"
	// ImportLog is `(level i32, ptr i32, len i32)`: writes a log line at a
	// LogLevel into the platform's logs.
	ImportLog = "log"

	// Keyed state and timers, for grouped kinds. A state is named by its
	// index in Description.States; calls act on the current group's key
	// (and window), which ImportEnter sets. Functions that fill a guest
	// buffer return the length of the data: when it exceeds the buffer's
	// capacity nothing is copied and the guest calls again at once with a
	// larger buffer, getting the same bytes (the host keeps them); -1 means
	// absent (value_get, map_get), and an empty list or map has a count of
	// 0. See docs/ABI.md.

	// ImportEnter is `(group i32)`: later state and timer calls act on the
	// key (and window) of that group of the current frame.
	ImportEnter = "enter"
	// ImportValueGet is `(state i32, buf i32, cap i32) -> i32`.
	ImportValueGet = "value_get"
	// ImportValueSet is `(state i32, ptr i32, len i32)`.
	ImportValueSet = "value_set"
	// ImportStateClear is `(state i32)`: clears a state of any kind.
	ImportStateClear = "state_clear"
	// ImportListAppend is `(state i32, ptr i32, len i32)`.
	ImportListAppend = "list_append"
	// ImportListGet is `(state i32, buf i32, cap i32) -> i32`: the list as
	// u32 count | (u32 length | bytes)*.
	ImportListGet = "list_get"
	// ImportMapGet is `(state i32, key i32, key_len i32, buf i32, cap i32) -> i32`.
	ImportMapGet = "map_get"
	// ImportMapPut is `(state i32, key i32, key_len i32, ptr i32, len i32)`.
	ImportMapPut = "map_put"
	// ImportMapRemove is `(state i32, key i32, key_len i32)`.
	ImportMapRemove = "map_remove"
	// ImportMapEntries is `(state i32, buf i32, cap i32) -> i32`: the map as
	// u32 count | (u32 key length | key | u32 value length | value)*, in key
	// order.
	ImportMapEntries = "map_entries"
	// ImportTimerRegister is `(domain i32, timestamp i64)`: a timer for the
	// current key (and window) in a TimeDomain, de-duplicated.
	ImportTimerRegister = "timer_register"
	// ImportTimerDelete is `(domain i32, timestamp i64)`.
	ImportTimerDelete = "timer_delete"
)

// State kinds a module may declare.
const (
	StateValue = "value"
	StateList  = "list"
	StateMap   = "map"
)

// LogLevel is the level argument of ImportLog.
type LogLevel int32

// Log levels, matching slog's ordering.
const (
	LogDebug LogLevel = 0
	LogInfo  LogLevel = 1
	LogWarn  LogLevel = 2
	LogError LogLevel = 3
)

// Pack places a 32-bit pointer and length in the i64 that ExportDescribe and
// ExportCall return: the pointer in the high half, the length in the low.
func Pack(ptr, length uint32) uint64 { return uint64(ptr)<<32 | uint64(length) }

// Unpack splits a value made by Pack.
func Unpack(v uint64) (ptr, length uint32) { return uint32(v >> 32), uint32(v) }
