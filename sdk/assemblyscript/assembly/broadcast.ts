// Broadcast states, for the broadcast state pattern (docs/ABI.md, Broadcast
// state; Flink's KeyedBroadcastProcessFunction).

import { MapState, states } from "./keyed";

/** A broadcast state: a map that every subtask of a broadcast_process
 * operator holds whole, not scoped by key, without TTL. Declare it at the
 * top level. A processBroadcast function reads and writes it (get, entries,
 * put, remove, clear); the keyed input's process and onTimer functions only
 * read it: a write traps the call with an error naming the state. */
export class BroadcastState extends MapState {
  constructor(name: string) {
    super(name, "");
    states[states.length - 1].broadcast = true;
  }
}
