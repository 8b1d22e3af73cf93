package udf

import "wasmstream.io/platform/abi"

// The broadcast state pattern, as Flink's KeyedBroadcastProcessFunction: a
// broadcast_process operator connects a broadcast input (every record
// reaches every subtask) with a keyed input. Its module registers a
// ProcessBroadcast function for the broadcast input, a Process function (and
// optionally an OnTimer function) for the keyed input, and declares the
// broadcast states both share:
//
//	var rules = udf.BroadcastMapState("rules")
//
// ProcessBroadcast functions read and write them (Put, Remove, Clear); the
// keyed input's functions only read them (Get, Entries): a write from there
// fails the call with an error naming the state. The platform checkpoints
// every subtask's copy and restores it at any parallelism.

// StateBroadcast is a broadcast state: a map that every subtask of the
// operator holds whole, not scoped by key.
type StateBroadcast struct{ m StateMap }

// BroadcastMapState declares a broadcast state. It has no TTL: every
// subtask must hold the same entries.
func BroadcastMapState(name string) *StateBroadcast {
	s := &StateBroadcast{m: StateMap{id: functions.declare(name, abi.StateMap, nil)}}
	functions.states[s.m.id].broadcast = true
	return s
}

// Get returns the value under k.
func (s *StateBroadcast) Get(ctx *Context, k []byte) ([]byte, bool) { return s.m.Get(ctx, k) }

// Entries returns the state's entries in key order.
func (s *StateBroadcast) Entries(ctx *Context) []MapEntry { return s.m.Entries(ctx) }

// Put sets the value under k; only from a ProcessBroadcast function.
func (s *StateBroadcast) Put(ctx *Context, k, value []byte) { s.m.Put(ctx, k, value) }

// Remove removes k; only from a ProcessBroadcast function.
func (s *StateBroadcast) Remove(ctx *Context, k []byte) { s.m.Remove(ctx, k) }

// Clear removes every entry; only from a ProcessBroadcast function.
func (s *StateBroadcast) Clear(ctx *Context) { s.m.Clear(ctx) }

// ProcessBroadcast registers the broadcast side of a broadcast_process
// operator: it is called with a batch of the broadcast input's records, in
// arrival order, and may write broadcast states and emit records (with no
// key: EmitValue emits with an empty key and the last record's timestamp).
// It has no keyed state and no timers. Every subtask calls it with every
// broadcast record, so it must change the broadcast states the same way
// everywhere: depend only on the records and the states, not on the clock.
//
// If f returns an error or panics, every record of recs fails with it and
// what f emitted for them is discarded; the states f changed stay changed.
func ProcessBroadcast(name string, f func(ctx *Context, recs []Record) error) {
	mustFunc(name, f == nil)
	keyless := func(ctx *Context, _ []byte, recs []Record) error { return f(ctx, recs) }
	functions.add(function{name: name, kind: abi.KindProcessBroadcast, run: func(c *caller, frame []byte) []byte {
		return c.keyed.process(c, keyless, frame)
	}})
}
