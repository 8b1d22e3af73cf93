package udfdev

import (
	"context"
	"errors"
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/broadcast"
	"wasmstream.io/platform/runtime/operator/process"
	"wasmstream.io/platform/state"
)

// broadcastFunction is the index of the process_broadcast function the
// options name, or -1 without one. Broadcast lines need one, and it goes
// with a process function.
func broadcastFunction(d abi.Description, opt Options, kind abi.Kind) (int, error) {
	if opt.Broadcast == "" {
		for i, st := range opt.Steps {
			if st.Broadcast != nil {
				return -1, fmt.Errorf("broadcast record %d (before input %d): broadcast lines go with --broadcast, the process_broadcast function", i, st.Before)
			}
		}
		return -1, nil
	}
	if kind != abi.KindProcess {
		return -1, fmt.Errorf("--broadcast goes with a process function, the keyed side; %q is a %s function", opt.Function, kind)
	}
	fn := d.Lookup(opt.Broadcast)
	if fn < 0 || d.Functions[fn].Kind != abi.KindProcessBroadcast {
		return -1, fmt.Errorf("the module has no process_broadcast function %q; it has %s", opt.Broadcast, functionList(d))
	}
	return fn, nil
}

// broadcastState is one entry of a broadcast state after a run.
type broadcastStateLine struct {
	State    string  `json:"broadcast_state"`
	MapKey   string  `json:"map_key"`
	Value    *string `json:"value,omitempty"`
	ValueB64 []byte  `json:"value_base64,omitempty"`
}

// broadcastProcess runs process function fn on the keyed input and
// process_broadcast function broadcastFn on the broadcast input of a
// broadcast_process operator, as the platform builds it: a keyed process
// operator whose calls read the broadcast states, inside the operator that
// runs the broadcast records. After the outputs come the keyed state, the
// timers left and the broadcast states.
func (r *run) broadcastProcess(ctx context.Context, keyed *state.Keyed, fn, broadcastFn int, onTimer *operator.GroupCall) error {
	store := broadcast.NewStore(r.mod.Description.States, 0)
	if onTimer != nil {
		g := store.ReadOnly(*onTimer)
		onTimer = &g
	}
	proc := process.New(r.opt.Function, store.ReadOnly(*r.call(fn)), onTimer, keyed, r.opt.BatchSize, r.policy, r)
	proc.SetSideOutputs(r.sideOutputs())
	proc.Clock = r.opt.Clock
	r.broadcastInput = &operator.Inputs{Split: 1}
	op := broadcast.New(broadcast.Config{Vertex: r.opt.Function, Store: store, Keyed: proc, Broadcast: *r.call(broadcastFn),
		Inputs: r.broadcastInput, BatchSize: r.opt.BatchSize, Policy: r.policy, Next: r})
	op.Clock = r.opt.Clock
	r.prefixes = append(r.prefixes, r.prefix(r.opt.Broadcast))
	r.afterInput = func() error {
		return errors.Join(r.writeProcessState(keyed, proc), r.writeBroadcastState(store))
	}
	return r.drive(ctx, op, onTimer != nil)
}

// broadcastRecord passes broadcast record number len(r.broadcasts) to
// stage, a broadcast_process operator, in a call of its own.
func (r *run) broadcastRecord(ctx context.Context, stage operator.Stage, rec *abi.Record) error {
	r.broadcasts = append(r.broadcasts, *rec)
	n := len(r.broadcasts) - 1
	r.first, r.batch, r.broadcasting = n, r.broadcasts[n:], true
	r.broadcastInput.Right = true
	defer func() { r.broadcastInput.Right, r.broadcasting = false, false }()
	return stage.Process(ctx, r.batch)
}

// writeBroadcastState writes every broadcast state, entry by entry in key
// order.
func (r *run) writeBroadcastState(store *broadcast.Store) error {
	for _, i := range r.mod.Description.BroadcastStates() {
		n, entries := store.Entries(uint32(i))
		for range n {
			var k, v []byte
			var err error
			if k, entries, err = cutLen(entries); err != nil {
				return err
			}
			if v, entries, err = cutLen(entries); err != nil {
				return err
			}
			line := broadcastStateLine{State: store.Name(uint32(i)), MapKey: string(k)}
			line.Value, line.ValueB64 = text(v)
			if err := r.w.enc.Encode(line); err != nil {
				return err
			}
		}
	}
	return nil
}
