//go:build !wasip1

package udf

import (
	"encoding/binary"
	"fmt"

	"wasmstream.io/platform/abi"
)

// ProcessWindow calls the window process function name (registered with
// ProcessWindow or ProcessWindowWithState) once for window w of key with
// recs, as the platform does when the window fires, and returns its results
// resolved with what they inherit (the key, and the timestamp w.End - 1).
// The function's states act on key's state in w, which the harness keeps
// until PurgeWindow: calling ProcessWindow again for the same window is a
// re-firing, as a record late within the allowed lateness makes.
func (h *Harness) ProcessWindow(name string, key []byte, w Window, recs ...Record) ([]Output, error) {
	fn, err := h.function(name, abi.KindWindowProcess)
	if err != nil {
		return nil, err
	}
	frame := abi.AppendFrameHead(nil, abi.FrameHead{Watermark: h.wm, ProcessingTime: h.now, Groups: 1})
	frame = abi.AppendGroupHead(frame, &abi.GroupHead{Flags: abi.GroupWindow, Key: key, WindowStart: w.Start, WindowEnd: w.End}, uint32(len(recs)))
	for i := range recs {
		frame = abi.AppendRecord(frame, &recs[i])
	}
	in := []Record{{Key: key, Timestamp: w.End - 1}}
	return resolve(h.call(fn, frame, [][]byte{key}, [][]byte{windowSpace(w)}), in)
}

// WindowValue reads the value state name of key in window w, as the
// platform holds it.
func (h *Harness) WindowValue(name string, key []byte, w Window) ([]byte, bool) {
	return h.value(name, key, windowSpace(w))
}

// PurgeWindow clears every state of key in window w, as the platform does
// when it drops the window once the watermark passes its end plus the
// allowed lateness.
func (h *Harness) PurgeWindow(key []byte, w Window) {
	ns := windowSpace(w)
	for id := range functions.states {
		k := h.stateKey(uint32(id), key, ns)
		delete(h.values, k)
		delete(h.lists, k)
		delete(h.maps, k)
	}
}

// windowSpace is the namespace of window w's state.
func windowSpace(w Window) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(w.Start))
	return binary.BigEndian.AppendUint64(b, uint64(w.End))
}

// noWindowTimers fails a timer call during a window function's call.
func (h *Harness) noWindowTimers() {
	if h.spaces != nil {
		panic(fmt.Sprintf("udf: window process functions have no timers (group %d)", h.cur))
	}
}
