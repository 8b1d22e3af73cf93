// Package process is the keyed process operator (Flink's
// KeyedProcessFunction): batches grouped by key call the process function
// with the keyed state and timer imports, fired event-time and
// processing-time timers call on_timer, and the operator's keyed state and
// timers are its snapshot, restored by key group at any parallelism.
package process
