// Package broadcast is the broadcast process operator (Flink's
// KeyedBroadcastProcessFunction): a broadcast input, whose every record
// reaches every subtask, connected with a keyed input. Records of the
// broadcast input call the process_broadcast function, which reads and
// writes the broadcast states (maps every subtask holds whole); records of
// the keyed input call the process function, which reads the broadcast
// states and uses keyed state and timers as a keyed process function does.
// A subtask's snapshot is its copy of the broadcast states and its keyed
// state and timers; on restore, at any parallelism, every subtask takes the
// broadcast states of the former subtask 0 and the keyed state of its own
// key groups.
package broadcast
