package state

import (
	"bytes"
	"context"
	"fmt"
)

// EachKey calls fn once for every key and namespace that holds state id,
// over the key groups the Keyed owns, in key group and stored key order.
// It reads a snapshot of the store, so fn may read and change the state
// (set the key, write, clear); key and ns are valid only during the call.
// It serves work that visits the state at rest, such as migrating a
// retired state after a restore, not the record path: it costs a snapshot.
func (k *Keyed) EachKey(ctx context.Context, id int, fn func(key, ns []byte) error) error {
	if id < 0 || id >= len(k.states) {
		return fmt.Errorf("state: no state %d (%d declared)", id, len(k.states))
	}
	ss, err := k.st.snapshot()
	if err != nil {
		return fmt.Errorf("state %q: each key: %w", k.states[id].name, err)
	}
	defer ss.release()
	var last []byte
	for kg := k.rng.First; kg <= k.rng.Last; kg++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("state %q: each key: %w", k.states[id].name, err)
		}
		err := ss.each(kg, func(ck, _, _ []byte, _ bool) error {
			if int(stateOf(ck)) != id || bytes.Equal(ck, last) {
				return nil
			}
			last = append(last[:0], ck...)
			key, ns, _, ok := splitComposite(ck)
			if !ok {
				return fmt.Errorf("malformed stored key %x", ck)
			}
			return fn(key, ns)
		})
		if err != nil {
			return fmt.Errorf("state %q: each key: %w", k.states[id].name, err)
		}
	}
	return nil
}
