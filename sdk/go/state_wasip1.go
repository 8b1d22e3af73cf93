//go:build wasip1

package udf

import "unsafe"

// The platform's state and timer imports (docs/ABI.md). The Go linker keeps
// an import only when the module calls it, so a module without keyed
// functions imports none of them.

//go:wasmimport platform enter
func importEnter(group uint32)

//go:wasmimport platform value_get
func importValueGet(state uint32, buf unsafe.Pointer, capacity uint32) int32

//go:wasmimport platform value_set
func importValueSet(state uint32, ptr unsafe.Pointer, length uint32)

//go:wasmimport platform state_clear
func importStateClear(state uint32)

//go:wasmimport platform list_append
func importListAppend(state uint32, ptr unsafe.Pointer, length uint32)

//go:wasmimport platform list_get
func importListGet(state uint32, buf unsafe.Pointer, capacity uint32) int32

//go:wasmimport platform map_get
func importMapGet(state uint32, key unsafe.Pointer, keyLength uint32, buf unsafe.Pointer, capacity uint32) int32

//go:wasmimport platform map_put
func importMapPut(state uint32, key unsafe.Pointer, keyLength uint32, ptr unsafe.Pointer, length uint32)

//go:wasmimport platform map_remove
func importMapRemove(state uint32, key unsafe.Pointer, keyLength uint32)

//go:wasmimport platform map_entries
func importMapEntries(state uint32, buf unsafe.Pointer, capacity uint32) int32

//go:wasmimport platform timer_register
func importTimerRegister(domain uint32, ts int64)

//go:wasmimport platform timer_delete
func importTimerDelete(domain uint32, ts int64)

func ptr(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

func hostEnter(group uint32) { importEnter(group) }

func hostValueGet(state uint32, buf []byte) int32 {
	return importValueGet(state, ptr(buf), uint32(len(buf)))
}

func hostValueSet(state uint32, v []byte) { importValueSet(state, ptr(v), uint32(len(v))) }

func hostStateClear(state uint32) { importStateClear(state) }

func hostListAppend(state uint32, v []byte) { importListAppend(state, ptr(v), uint32(len(v))) }

func hostListGet(state uint32, buf []byte) int32 {
	return importListGet(state, ptr(buf), uint32(len(buf)))
}

func hostMapGet(state uint32, k, buf []byte) int32 {
	return importMapGet(state, ptr(k), uint32(len(k)), ptr(buf), uint32(len(buf)))
}

func hostMapPut(state uint32, k, v []byte) {
	importMapPut(state, ptr(k), uint32(len(k)), ptr(v), uint32(len(v)))
}

func hostMapRemove(state uint32, k []byte) { importMapRemove(state, ptr(k), uint32(len(k))) }

func hostMapEntries(state uint32, buf []byte) int32 {
	return importMapEntries(state, ptr(buf), uint32(len(buf)))
}

func hostTimerRegister(domain uint32, ts int64) { importTimerRegister(domain, ts) }

func hostTimerDelete(domain uint32, ts int64) { importTimerDelete(domain, ts) }
