package process

import (
	"context"
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
)

// migration converts retired states (abi/migrate.go) after a restore.
type migration struct {
	fn      int
	name    string
	retired []int
}

// SetMigration makes the operator call its module's migrate_state function
// fn (named name) after a restore, for every key holding one of the
// retired states, and clear those states then. It must be set before
// Restore.
func (op *Operator) SetMigration(fn int, name string, retired []int) {
	op.migration = &migration{fn: fn, name: name, retired: retired}
}

// migrate runs the migration over the restored state, a batch of keys a
// call, in the process function's guest. A trap or an error entry fails
// the restore: a half-converted state must not run.
func (op *Operator) migrate(ctx context.Context) error {
	m := op.migration
	if m == nil {
		return nil
	}
	call := op.call
	call.Fn, call.Function = m.fn, m.name
	env := operator.NewKeyedEnv(op.keyed, op.timers)
	call.Env = &env
	var keys, spaces [][]byte
	flush := func() error {
		if len(keys) == 0 {
			return nil
		}
		call.Begin(abi.OpNone, op.wm, op.Clock())
		env.Begin()
		for i := range keys {
			env.Add(keys[i], spaces[i])
			call.Add(&abi.GroupHead{Key: keys[i]}, nil)
		}
		err := call.Run(ctx, false, func(e *abi.Entry) error {
			if e.Tag == abi.TagError && int(e.Index) < len(keys) {
				return fmt.Errorf("key %q: %s", keys[e.Index], e.Message)
			}
			return call.BadOutput(fmt.Errorf("a migrate_state function answers only with errors, got an entry of tag %d", e.Tag))
		})
		if err != nil {
			return err
		}
		for i := range keys {
			if err := op.keyed.SetKey(keys[i]); err != nil {
				return err
			}
			op.keyed.SetNamespace(spaces[i])
			for _, id := range m.retired {
				if err := op.keyed.Clear(id); err != nil {
					return err
				}
			}
		}
		keys, spaces = keys[:0], spaces[:0]
		return nil
	}
	for _, id := range m.retired {
		err := op.keyed.EachKey(ctx, id, func(key, ns []byte) error {
			keys = append(keys, append([]byte(nil), key...))
			spaces = append(spaces, append([]byte(nil), ns...))
			if len(keys) < op.batchSize {
				return nil
			}
			return flush()
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			return fmt.Errorf("operator[%s]: migrate_state %s: %w", op.vertex, m.name, err)
		}
	}
	return nil
}
