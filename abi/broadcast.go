package abi

import "fmt"

// The broadcast state pattern (Flink's KeyedBroadcastProcessFunction): a
// broadcast_process operator connects a broadcast input, whose every record
// reaches every subtask, with a keyed input. Its module declares broadcast
// states, maps marked Broadcast in the self-description, besides its keyed
// states. The same map imports (map_get, map_put, map_remove, map_entries,
// state_clear) act on a broadcast state, which is not scoped by key:
//
//   - a process_broadcast function gets the broadcast input's records as a
//     grouped frame of one group with an empty key, answers by record as a
//     process function does, and may read and write broadcast states; keyed
//     state and timers are not there (there is no current key);
//   - the keyed input's process function (kind process) and on_timer
//     function may read broadcast states and not write them: map_put,
//     map_remove or state_clear on one traps the call with an error naming
//     the state.
//
// docs/ABI.md specifies it.

// checkBroadcastState checks that a broadcast state is a map without TTL:
// every subtask must hold the same entries, and TTL is processing time,
// which differs between subtasks.
func checkBroadcastState(st State) error {
	if !st.Broadcast {
		return nil
	}
	if st.Kind != StateMap {
		return fmt.Errorf("state %q: a broadcast state is a map, not a %s", st.Name, st.Kind)
	}
	if st.TTL != "" {
		return fmt.Errorf("state %q: a broadcast state has no ttl", st.Name)
	}
	return nil
}

// BroadcastStates lists the indexes of the description's broadcast states.
func (d Description) BroadcastStates() []int {
	var out []int
	for i, st := range d.States {
		if st.Broadcast {
			out = append(out, i)
		}
	}
	return out
}
