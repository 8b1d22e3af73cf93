package plan

import (
	"fmt"
	"strings"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/spec"
)

// planProcess resolves a process operator's functions into v and returns
// the problems of its state_ttl.
func planProcess(o *spec.Operator, v *Vertex, path string, resolve resolver, descs map[string]abi.Description) []string {
	v.Fn = resolve(path+".process", o.Process.Module, o.Process.Function, abi.KindProcess)
	if o.OnTimer != "" {
		v.OnTimer = resolve(path+".on_timer", o.Process.Module, o.OnTimer, abi.KindOnTimer)
	}
	if v.Fn == nil {
		return nil
	}
	return stateTTLProblems(path, o, v.Fn, descs[v.Fn.Module])
}

// stateTTLProblems checks that every state an operator's state_ttl names is
// declared by the module of fn.
func stateTTLProblems(path string, o *spec.Operator, fn *Func, desc abi.Description) []string {
	if fn == nil {
		return nil
	}
	var problems []string
	for i, t := range o.StateTTL {
		if desc.LookupState(t.State) < 0 {
			problems = append(problems, fmt.Sprintf("%s.state_ttl[%d].state: module %s declares no state %q (it declares %s)",
				path, i, fn.Module, t.State, stateList(desc)))
		}
	}
	return problems
}

// stateList names a module's declared states for messages.
func stateList(d abi.Description) string {
	if len(d.States) == 0 {
		return "none"
	}
	names := make([]string, len(d.States))
	for i, st := range d.States {
		names[i] = fmt.Sprintf("%s (%s)", st.Name, st.Kind)
	}
	return strings.Join(names, ", ")
}
