package plan

import (
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/spec"
)

// planBroadcast resolves a broadcast_process operator's functions into v
// (Fn the keyed side's process function, Broadcast the process_broadcast
// function, OnTimer the on_timer function) and returns the problems of its
// module's states: it must declare a broadcast state, as Flink's
// broadcast() takes at least one MapStateDescriptor, and state_ttl must
// not name one (every subtask holds the same broadcast states; TTL, which
// is processing time, would make them differ).
func planBroadcast(o *spec.Operator, v *Vertex, path string, resolve resolver, descs map[string]abi.Description) []string {
	bp := o.BroadcastProcess
	p := path + ".broadcast_process"
	v.Fn = resolve(p+".process_element", bp.Module, bp.ProcessElement, abi.KindProcess)
	v.Broadcast = resolve(p+".process_broadcast", bp.Module, bp.ProcessBroadcast, abi.KindProcessBroadcast)
	if o.OnTimer != "" {
		v.OnTimer = resolve(path+".on_timer", bp.Module, o.OnTimer, abi.KindOnTimer)
	}
	if v.Fn == nil {
		return nil
	}
	desc := descs[v.Fn.Module]
	problems := stateTTLProblems(path, o, v.Fn, desc)
	if len(desc.BroadcastStates()) == 0 {
		problems = append(problems, fmt.Sprintf("%s.module: module %s declares no broadcast state (it declares %s)", p, bp.Module, stateList(desc)))
	}
	for i, t := range o.StateTTL {
		if j := desc.LookupState(t.State); j >= 0 && desc.States[j].Broadcast {
			problems = append(problems, fmt.Sprintf("%s.state_ttl[%d].state: %q is a broadcast state, which has no ttl", path, i, t.State))
		}
	}
	return problems
}
