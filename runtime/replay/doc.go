// Package replay re-runs one key's history from a checkpoint in a sandbox:
// the key's state and timers at the checkpoint (its key group only, its
// entries only), the source records since the checkpoint's positions read
// again from the source's JetStream stream, the upstream chain (timestamps,
// watermarks, maps, filters, key selection) run over them to find the key's
// records, and the keyed operator (process function or window) driven for
// that key alone. It reports every input, output, state change and timer of
// the key as Events; with a second module it runs that module's operator
// beside the recorded one on the same inputs and reports how their outputs
// differ. Nothing it runs writes anywhere: there are no sinks and its state
// lives in memory for the replay alone.
package replay
