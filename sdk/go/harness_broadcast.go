//go:build !wasip1

package udf

import (
	"fmt"
	"slices"

	"wasmstream.io/platform/abi"
)

// ProcessBroadcast calls the ProcessBroadcast function name once with
// recs, as the platform calls it with a batch of the broadcast input: one
// group without a key. Broadcast states are not scoped by key in the
// harness either; Process and OnTimer functions then read what it wrote.
// As on the platform, a keyed state or a timer used here, or a broadcast
// state written from a Process or OnTimer function, fails the call.
func (h *Harness) ProcessBroadcast(name string, recs ...Record) ([]Output, error) {
	fn, err := h.function(name, abi.KindProcessBroadcast)
	if err != nil {
		return nil, err
	}
	frame := abi.AppendFrameHead(nil, abi.FrameHead{Watermark: h.wm, ProcessingTime: h.now, Groups: 1})
	frame = abi.AppendGroupHead(frame, &abi.GroupHead{}, uint32(len(recs)))
	in := make([]Record, len(recs))
	for i := range recs {
		frame = abi.AppendRecord(frame, &recs[i])
		in[i] = recs[i]
		in[i].Key = nil
	}
	h.broadcasting = true
	defer func() { h.broadcasting = false }()
	return resolve(h.call(fn, frame, [][]byte{nil}, nil), in)
}

// Broadcast reads the entry k of broadcast state name.
func (h *Harness) Broadcast(name string, k []byte) ([]byte, bool) {
	id := slices.IndexFunc(functions.states, func(d stateDecl) bool { return d.name == name && d.broadcast })
	if id < 0 {
		return nil, false
	}
	e, ok := h.maps[h.stateKey(uint32(id), nil, nil)][string(k)]
	return slices.Clone(e.v), ok
}

// broadcastKey is where broadcast state id is kept, whatever the key; it
// fails the call for a keyed state used from a ProcessBroadcast function.
func (h *Harness) broadcastKey(id uint32) (string, bool) {
	if int(id) < len(functions.states) && functions.states[id].broadcast {
		return h.stateKey(id, nil, nil), true
	}
	if h.broadcasting {
		panic(fmt.Sprintf("udf: keyed state %q used from a ProcessBroadcast function, which has no current key", functions.states[id].name))
	}
	return "", false
}

// writable fails a keyed function's write of a broadcast state.
func (h *Harness) writable(id uint32) {
	if int(id) < len(functions.states) && functions.states[id].broadcast && !h.broadcasting {
		panic(fmt.Sprintf("udf: broadcast state %q is read-only in process and on_timer functions; only process_broadcast writes it", functions.states[id].name))
	}
}

// noBroadcastTimers fails a timer call of a ProcessBroadcast function.
func (h *Harness) noBroadcastTimers() {
	if h.broadcasting {
		panic("udf: a ProcessBroadcast function has no timers")
	}
}
