//go:build wasip1

// Command gomod is a UDF module written in Go directly against ABI v1, with
// no SDK, for the host's tests. Built with
// GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared, it is a reactor.
// Its functions, by index:
//
//	0 upper  upper-cases each value
//	1 hello  prints "hello <value>" to stdout and logs "saw <value>"
//	2 hoard  allocates until the runtime runs out of memory
//	3 spin   loops forever
package main

import (
	"bytes"
	"fmt"
	"unsafe"

	"wasmstream.io/platform/abi"
)

const description = `{"abi":1,"functions":[{"name":"upper","kind":"map"},{"name":"hello","kind":"map"},{"name":"hoard","kind":"map"},{"name":"spin","kind":"map"}]}`

var (
	input  = make([]byte, 1)
	output []byte
	reader abi.InputReader
	record abi.Record
	hoard  [][]byte
	spins  int
)

func main() {}

//go:wasmimport platform log
func hostLog(level int32, ptr unsafe.Pointer, size int32)

func logInfo(msg string) {
	hostLog(int32(abi.LogInfo), unsafe.Pointer(unsafe.StringData(msg)), int32(len(msg)))
}

func location(b []byte) uint64 {
	return abi.Pack(uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))), uint32(len(b)))
}

//go:wasmexport platform_abi_version
func abiVersion() int32 { return abi.Version }

//go:wasmexport platform_describe
func describe() uint64 {
	return abi.Pack(uint32(uintptr(unsafe.Pointer(unsafe.StringData(description)))), uint32(len(description)))
}

//go:wasmexport platform_alloc
func alloc(size int32) int32 {
	if int(size) > cap(input) {
		input = make([]byte, size)
	}
	input = input[:size]
	return int32(uintptr(unsafe.Pointer(unsafe.SliceData(input))))
}

//go:wasmexport platform_call
func call(fn, ptr, size int32) uint64 {
	output = abi.AppendInputHeader(output[:0], 0)
	if err := reader.Reset(input[:size]); err != nil {
		return fail(err)
	}
	var n uint32
	for i := uint32(0); reader.Next(&record); i++ {
		switch fn {
		case 0:
			output = abi.AppendEntryRecord(output, i, 0, &abi.Record{Value: bytes.ToUpper(record.Value)})
			n++
		case 1:
			fmt.Printf("hello %s\n", record.Value)
			logInfo("saw " + string(record.Value))
		case 2:
			for {
				hoard = append(hoard, make([]byte, 1<<20))
			}
		case 3:
			for {
				spins++
			}
		}
	}
	if err := reader.Err(); err != nil {
		return fail(err)
	}
	abi.SetCount(output, n)
	return location(output)
}

// fail answers a frame it cannot read with one error entry for all records.
func fail(err error) uint64 {
	output = abi.AppendEntryError(abi.AppendInputHeader(output[:0], 1), abi.AllRecords, err.Error())
	return location(output)
}
