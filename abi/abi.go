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
