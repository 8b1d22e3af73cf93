package plan

import (
	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/spec"
)

// planLookup resolves an async_lookup operator's functions: its
// lookup_result function into v.Fn and, when the spec names one, its
// lookup_request function into v.LookupRequest.
func planLookup(a *spec.AsyncLookup, v *Vertex, path string, resolve func(path, module, function string, kind abi.Kind) *Func) {
	v.Fn = resolve(path, a.Module, a.Function, abi.KindLookupResult)
	if a.Request != "" {
		v.LookupRequest = resolve(path+".request", a.Module, a.Request, abi.KindLookupRequest)
	}
}
