package udfs

import (
	"reflect"
	"testing"

	"github.com/tetratelabs/wazero/api"

	"wasmstream.io/platform/abi"
)

// wasiAllowed are the WASI preview 1 functions a module may import
// (docs/ABI.md).
var wasiAllowed = map[string]bool{
	"args_get": true, "args_sizes_get": true, "environ_get": true, "environ_sizes_get": true,
	"clock_res_get": true, "clock_time_get": true, "fd_write": true, "fd_read": true,
	"fd_close": true, "fd_seek": true, "fd_fdstat_get": true, "fd_fdstat_set_flags": true,
	"fd_filestat_get": true, "fd_prestat_get": true, "fd_prestat_dir_name": true,
	"poll_oneoff": true, "proc_exit": true, "random_get": true, "sched_yield": true,
}

// exportSignatures are the parameter and result types of the functions a
// module exports.
var exportSignatures = map[string][2][]api.ValueType{
	abi.ExportVersion:  {nil, {api.ValueTypeI32}},
	abi.ExportAlloc:    {{api.ValueTypeI32}, {api.ValueTypeI32}},
	abi.ExportDescribe: {nil, {api.ValueTypeI64}},
	abi.ExportCall:     {{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32}, {api.ValueTypeI64}},
}

func TestModuleContracts(t *testing.T) {
	fn := func(name string, kind abi.Kind) abi.Function { return abi.Function{Name: name, Kind: kind} }
	tests := []struct {
		module    string
		functions []abi.Function
		logs      bool
	}{
		{"faulty-wat", []abi.Function{fn("poison", abi.KindMap), fn("reject", abi.KindMap), fn("spin", abi.KindMap), fn("bomb", abi.KindMap)}, false},
		{"kinds", []abi.Function{
			fn("swap", abi.KindMap), fn("delay", abi.KindMap), fn("annotate", abi.KindMap), fn("crash", abi.KindMap),
			fn("log", abi.KindMap), fn("nonempty", abi.KindFilter), fn("fields", abi.KindFlatMap),
			fn("by_value", abi.KindKey), fn("parse_time", abi.KindTimestamp),
		}, true},
		{"avg", []abi.Function{fn("avg", abi.KindAggregate), fn("largest", abi.KindReduce), fn("count", abi.KindAggregate)}, false},
		{"sessions", []abi.Function{fn("summary", abi.KindWindowProcess), fn("gap", abi.KindSessionGap), fn("heartbeat", abi.KindWatermark)}, false},
		{"upper", []abi.Function{fn("upper", abi.KindMap)}, false},
		{"upper-wat", []abi.Function{fn("upper", abi.KindMap)}, false},
		{"wordcount", []abi.Function{fn("split", abi.KindFlatMap), fn("word", abi.KindKey), fn("count", abi.KindWindowProcess)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.module, func(t *testing.T) {
			in := instantiate(t, tt.module)
			if want := (abi.Description{ABI: abi.Version, Functions: tt.functions}); !reflect.DeepEqual(in.desc, want) {
				t.Errorf("description %+v, want %+v", in.desc, want)
			}
			logs := false
			for _, f := range compiled(t, sandbox(), tt.module).ImportedFunctions() {
				module, name, _ := f.Import()
				switch {
				case module == abi.HostModule && name == abi.ImportLog:
					logs = true
				case module == "wasi_snapshot_preview1" && wasiAllowed[name]:
				default:
					t.Errorf("imports %s.%s", module, name)
				}
			}
			if logs != tt.logs {
				t.Errorf("imports %s.%s: %v, want %v", abi.HostModule, abi.ImportLog, logs, tt.logs)
			}
			exports := compiled(t, sandbox(), tt.module).ExportedFunctions()
			for name, sig := range exportSignatures {
				f, ok := exports[name]
				if !ok {
					t.Errorf("does not export %s", name)
					continue
				}
				if got := [2][]api.ValueType{f.ParamTypes(), f.ResultTypes()}; !reflect.DeepEqual(got, sig) {
					t.Errorf("%s has signature %v, want %v", name, got, sig)
				}
			}
			if _, ok := compiled(t, sandbox(), tt.module).ExportedMemories()[abi.ExportMemory]; !ok {
				t.Errorf("does not export %s", abi.ExportMemory)
			}
		})
	}
}
