package window

import (
	"fmt"
	"math"
	"unsafe"

	"wasmstream.io/platform/abi"
)

// DefaultBudget bounds the bytes one window operator subtask keeps (keys,
// panes, accumulators and buffered records) when its Config sets no Budget:
// past it the job fails with a message that says so rather than growing
// without bound.
const DefaultBudget = 256 << 20

// Fixed costs counted against the budget besides the bytes themselves.
const (
	slotOverhead = 128
	keyOverhead  = 96
)

// slot is one piece of a key's window contents: a time pane (tumbling and
// sliding windows share panes instead of copying records), a session, or a
// pane of a count window.
type slot struct {
	// start and end bound a pane or a session; count panes keep their
	// least and greatest timestamps (end exclusive).
	start, end int64
	// n counts the records folded in.
	n int64
	// agg is a built-in aggregate's accumulator.
	agg builtinAcc
	// data is a UDF accumulator (has is set once there is one), or the
	// encoded records of a process_window function.
	data []byte
	has  bool
	// hasFire and mark belong to triggered windows (triggered.go): tstate
	// is a next fire time when hasFire is set; mark what a batch has
	// pending on the slot.
	hasFire bool
	mark    slotMark
	// pending are records waiting for the batched UDF add call; they
	// alias the batch being processed.
	pending []abi.Record
	// timerEnd is the end a session's firing timer is registered for (0:
	// none).
	timerEnd int64
	// tstate is the state of a triggered window's trigger: a count
	// trigger's count, or a continuous trigger's next fire time; tdata a
	// custom trigger's (udftrigger.go).
	tstate int64
	tdata  []byte
}

// keyState is one key's window contents: its slots ordered by start.
type keyState struct {
	key   []byte
	slots []*slot
	// fired is the number (Operator.fireSeq) of the time window firing
	// this key last joined; a firing uses it to visit each key once.
	fired int64
	// arrived counts a count window key's records in completed panes.
	arrived int64
}

// slotAt returns the key's slot starting at start, or nil.
func (ks *keyState) slotAt(start int64) *slot {
	for i := len(ks.slots) - 1; i >= 0; i-- {
		if s := ks.slots[i]; s.start == start {
			return s
		} else if s.start < start {
			return nil
		}
	}
	return nil
}

// insert adds s in start order.
func (ks *keyState) insert(s *slot) {
	i := len(ks.slots)
	for i > 0 && ks.slots[i-1].start > s.start {
		i--
	}
	ks.slots = append(ks.slots, nil)
	copy(ks.slots[i+1:], ks.slots[i:])
	ks.slots[i] = s
}

// remove takes s out of the key's slots.
func (ks *keyState) remove(s *slot) {
	for i, x := range ks.slots {
		if x == s {
			copy(ks.slots[i:], ks.slots[i+1:])
			ks.slots[len(ks.slots)-1] = nil
			ks.slots = ks.slots[:len(ks.slots)-1]
			return
		}
	}
}

// windowContents is what a window operator keeps: keys, their slots and the
// bytes they hold. windowStore keeps it in memory; a state backend can take
// its place behind the same methods.
type windowContents interface {
	// key returns the key's state, creating it when create is set (else
	// nil when absent). It does not allocate for a key that exists.
	key(key []byte, create bool) *keyState
	// dropKey forgets a key without slots.
	dropKey(ks *keyState)
	// newSlot makes an empty slot; freeSlot gives one back.
	newSlot(start, end int64) *slot
	freeSlot(s *slot)
	// setData replaces a slot's data with a copy of b; appendData appends.
	setData(s *slot, b []byte)
	// setTriggerState replaces a slot's custom trigger state with a copy
	// of b.
	setTriggerState(s *slot, b []byte)
	appendData(s *slot, b ...[]byte)
	// keys is the number of keys; used is the bytes held.
	keys() int
	used() int64
}

// windowStore is the in-memory windowContents. It is owned by its task
// goroutine.
type windowStore struct {
	byKey     map[string]*keyState
	freeSlots []*slot
	freeKeys  []*keyState
	bytes     int64
}

func newWindowStore() *windowStore { return &windowStore{byKey: map[string]*keyState{}} }

func (w *windowStore) key(key []byte, create bool) *keyState {
	if ks, ok := w.byKey[string(key)]; ok || !create {
		return ks
	}
	var ks *keyState
	if n := len(w.freeKeys); n > 0 {
		ks, w.freeKeys = w.freeKeys[n-1], w.freeKeys[:n-1]
	} else {
		ks = &keyState{}
	}
	ks.key = append(ks.key[:0], key...)
	ks.fired, ks.arrived = math.MinInt64, 0
	// The map key views the state's own copy, which does not change while
	// the key is in the map.
	w.byKey[unsafe.String(unsafe.SliceData(ks.key), len(ks.key))] = ks
	w.bytes += keyOverhead + int64(len(key))
	return ks
}

func (w *windowStore) dropKey(ks *keyState) {
	delete(w.byKey, string(ks.key))
	w.bytes -= keyOverhead + int64(len(ks.key))
	// The map no longer views ks.key, so its array may be reused.
	ks.slots = ks.slots[:0]
	w.freeKeys = append(w.freeKeys, ks)
}

func (w *windowStore) newSlot(start, end int64) *slot {
	var s *slot
	if n := len(w.freeSlots); n > 0 {
		s, w.freeSlots = w.freeSlots[n-1], w.freeSlots[:n-1]
	} else {
		s = &slot{}
	}
	s.start, s.end = start, end
	w.bytes += slotOverhead
	return s
}

func (w *windowStore) freeSlot(s *slot) {
	w.bytes -= slotOverhead + int64(len(s.data)) + int64(len(s.tdata))
	clear(s.pending)
	*s = slot{data: s.data[:0], pending: s.pending[:0], tdata: s.tdata[:0]}
	w.freeSlots = append(w.freeSlots, s)
}

func (w *windowStore) setData(s *slot, b []byte) {
	w.bytes += int64(len(b) - len(s.data))
	s.data = append(s.data[:0], b...)
}

func (w *windowStore) setTriggerState(s *slot, b []byte) {
	w.bytes += int64(len(b) - len(s.tdata))
	s.tdata = append(s.tdata[:0], b...)
}

func (w *windowStore) appendData(s *slot, bs ...[]byte) {
	for _, b := range bs {
		w.bytes += int64(len(b))
		s.data = append(s.data, b...)
	}
}

func (w *windowStore) keys() int   { return len(w.byKey) }
func (w *windowStore) used() int64 { return w.bytes }

// errBudget reports window contents over their budget.
func errBudget(vertex string, used, budget int64) error {
	return fmt.Errorf("operator[%s]: window contents need %d bytes, over the budget of %d bytes per subtask", vertex, used, budget)
}
