//go:build wasip1

//lint:file-ignore U1000 the host calls these functions through their wasmexport names.

package udf

import (
	"unsafe"

	"wasmstream.io/platform/abi"
)

// The module's state behind its exports. A Wasm instance is single-threaded,
// so one caller serves every call.
var (
	module = newCaller(&functions)
	// input is the grow-only region platform_alloc hands out.
	input []byte
	// description is the self-description platform_describe points at.
	description []byte
)

// minInput is the smallest input region, so that small frames never
// reallocate.
const minInput = 64 << 10

//go:wasmexport platform_abi_version
func exportVersion() int32 {
	return abi.Version
}

//go:wasmexport platform_alloc
func exportAlloc(size uint32) uint32 {
	if uint64(size) > uint64(len(input)) {
		input = make([]byte, max(int(size), 2*len(input), minInput))
	}
	return address(input)
}

//go:wasmexport platform_describe
func exportDescribe() uint64 {
	description = functions.describe()
	return abi.Pack(address(description), uint32(len(description)))
}

//go:wasmexport platform_call
func exportCall(fn, ptr, size uint32) uint64 {
	var out []byte
	if base := address(input); ptr < base || uint64(ptr-base)+uint64(size) > uint64(len(input)) {
		out = module.fail("udf: the input frame is not inside the region platform_alloc returned")
	} else {
		out = module.call(fn, input[ptr-base:ptr-base+size])
	}
	return abi.Pack(address(out), uint32(len(out)))
}

// address is the linear-memory address of b's first byte.
func address(b []byte) uint32 {
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}
