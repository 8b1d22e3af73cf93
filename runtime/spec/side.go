package spec

import (
	"fmt"
	"slices"
	"strings"
)

// LateOutput is the side output of a window operator's or a join's late
// records: "id.late" reads them, as late_output does.
const LateOutput = "late"

// maxOutputName bounds a side output's name (the ABI's limit).
const maxOutputName = 64

// Stream resolves an input: the id of the vertex it reads and, when it
// reads a side output ("id.name", Flink's getSideOutput), the output's
// name. An input that is a vertex's id reads its main output, even when
// the id holds a dot; a job where an input could mean either is refused.
func (j *Job) Stream(input string) (vertex, output string) {
	if _, ok := j.Node(input); ok {
		return input, ""
	}
	if i := strings.LastIndexByte(input, '.'); i > 0 {
		if kind, ok := j.Node(input[:i]); ok && kind == KindOperator {
			return input[:i], input[i+1:]
		}
	}
	return input, ""
}

// HasLateOutput reports whether the operator has the side output "late":
// a window operator or a join.
func (o *Operator) HasLateOutput() bool {
	switch o.Kind() {
	case "aggregate", "reduce", "process_window", "join":
		return true
	}
	return false
}

// writesSideOutputs reports whether the operator runs a function that may
// write side outputs.
func (o *Operator) writesSideOutputs() bool {
	switch {
	case o.Process != nil, o.ProcessWindow != nil:
		return true
	case o.Join != nil:
		return o.Join.Function != nil || o.Join.CoGroup != nil
	}
	return false
}

// sideOutputs checks an operator's declared side outputs.
func (v *validator) sideOutputs(p string, op *Operator) {
	if len(op.SideOutputs) == 0 {
		return
	}
	if !op.writesSideOutputs() {
		v.fail(p+".side_outputs", "only a process, process_window or join function (or co_group) writes side outputs")
		return
	}
	for i, name := range op.SideOutputs {
		path := fmt.Sprintf("%s.side_outputs[%d]", p, i)
		switch {
		case name == LateOutput:
			v.fail(path, "%q is reserved for a window's or join's late records, which every window operator and join has without declaring it", name)
		case !isOutputName(name):
			v.fail(path, "want 1 to %d letters, digits, '-' and '_', got %q", maxOutputName, name)
		case slices.Index(op.SideOutputs, name) < i:
			v.fail(path, "duplicate side output %q", name)
		}
	}
}

// isOutputName reports whether s can name a side output: an identifier
// without dots, which separate it from its operator's id in an input.
func isOutputName(s string) bool {
	return len(s) <= maxOutputName && isIdentifier(s) && !strings.Contains(s, ".")
}

// sideInput checks an input that is not a vertex id as a side output
// reference, and notes it read. It reports whether input has that form.
func (v *validator) sideInput(path, input string) bool {
	from, name := v.job.Stream(input)
	x, ok := v.vertices[from]
	if name == "" || !ok || x.kind != KindOperator {
		return false
	}
	op := &v.job.Operators[x.index]
	switch {
	case name == LateOutput && op.HasLateOutput():
	case slices.Contains(op.SideOutputs, name):
	case name == LateOutput:
		v.fail(path, "operator %q has no late records: only a window operator or a join has the side output %q", from, name)
	default:
		declared := "it declares none in side_outputs"
		if len(op.SideOutputs) > 0 {
			declared = "its side_outputs are " + strings.Join(op.SideOutputs, ", ") + didYouMean(name, op.SideOutputs)
		}
		v.fail(path, "operator %q has no side output %q: %s", from, name, declared)
		return true
	}
	if v.read == nil {
		v.read = map[string]bool{}
	}
	v.read[input] = true
	return true
}

// ambiguous fails an input that is a vertex's id and also reads a side
// output of an operator whose id is its prefix.
func (v *validator) ambiguous(path, input string) {
	i := strings.LastIndexByte(input, '.')
	if i <= 0 {
		return
	}
	x, ok := v.vertices[input[:i]]
	if !ok || x.kind != KindOperator {
		return
	}
	op := &v.job.Operators[x.index]
	if name := input[i+1:]; slices.Contains(op.SideOutputs, name) || name == LateOutput && op.HasLateOutput() {
		v.fail(path, "%q is both a vertex's id and the side output %q of operator %q: rename one", input, name, input[:i])
	}
}

// unread fails every declared side output that no operator or sink reads.
func (v *validator) unread() {
	for i := range v.job.Operators {
		op := &v.job.Operators[i]
		if !op.writesSideOutputs() {
			continue
		}
		for k, name := range op.SideOutputs {
			if isOutputName(name) && name != LateOutput && !v.read[op.ID+"."+name] {
				v.fail(fmt.Sprintf("operators[%d].side_outputs[%d]", i, k),
					"no operator or sink reads side output %q: set an input to %q, or remove it", name, op.ID+"."+name)
			}
		}
	}
}
