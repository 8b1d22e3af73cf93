package spec

// BroadcastProcess is the broadcast state pattern (Flink's
// KeyedBroadcastProcessFunction): the operator's input, keyed by its
// key_by, is connected with the Broadcast input, whose every record reaches
// every subtask. ProcessBroadcast (a process_broadcast function) handles
// the broadcast records and writes the module's broadcast states;
// ProcessElement (a process function) handles the keyed records and reads
// them. The operator's on_timer names the keyed side's on_timer function.
type BroadcastProcess struct {
	// Broadcast is the id of the source or operator that is broadcast.
	Broadcast        string `json:"broadcast" required:"true"`
	Module           string `json:"module" required:"true"`
	ProcessElement   string `json:"process_element" required:"true"`
	ProcessBroadcast string `json:"process_broadcast" required:"true"`
}

// broadcastProcess checks a broadcast_process operator: a keyed input, a
// broadcast input that is another vertex, and both functions.
func (v *validator) broadcastProcess(p string, op *Operator) {
	b := op.BroadcastProcess
	q := p + ".broadcast_process"
	if op.KeyBy == nil {
		v.fail(p+".key_by", "required by broadcast_process: it keys the input (broadcast_process.broadcast is not keyed)")
	}
	if op.Partition != "" && op.KeyBy == nil {
		v.fail(p+".partition", "not with broadcast_process, whose input is keyed and whose broadcast input is broadcast")
	}
	v.input(q+".broadcast", b.Broadcast)
	if b.Broadcast != "" && b.Broadcast == op.Input {
		v.fail(q+".broadcast", "names the operator's input %q; broadcast another source or operator", op.Input)
	}
	switch {
	case b.Module == "":
		v.fail(q+".module", "required")
	case !isModuleRef(b.Module):
		v.fail(q+".module", "want a module id \"sha256:<64 lowercase hex digits>\", a module name or name@version, got %q", b.Module)
	}
	if b.ProcessElement == "" {
		v.fail(q+".process_element", "required")
	}
	if b.ProcessBroadcast == "" {
		v.fail(q+".process_broadcast", "required")
	}
}
