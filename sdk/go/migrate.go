package udf

import "wasmstream.io/platform/abi"

// Retired declares a state of an earlier version of the module that this
// version renamed or retyped: the platform restores the old version's state
// of that name into it after an upgrade, and the module's MigrateState
// function converts it into the new states. Declare it with the kind the
// old version gave it:
//
//	var oldSeen = udf.ValueState("seen", udf.Retired())
//	var marks = udf.MapState("marks")
func Retired() StateOption {
	return func(d *stateDecl) { d.retired = true }
}

// MigrateState registers the function that converts retired states (see
// Retired). After a restore the platform calls it once for every key (and
// window namespace) that holds a retired state; it reads the retired
// states and writes the new ones through ctx, which has the key's state and
// timers. The platform then clears the key's retired states. It emits
// nothing. An error or a panic fails the restore: at an upgrade the
// platform then rolls back to the old version. A module has at most one.
func MigrateState(name string, f func(ctx *Context, key []byte) error) {
	mustFunc(name, f == nil)
	functions.add(function{name: name, kind: abi.KindMigrateState, run: func(c *caller, frame []byte) []byte {
		return c.keyed.migrate(c, f, frame)
	}})
}

func (k *keyedCall) migrate(c *caller, f func(*Context, []byte) error, frame []byte) []byte {
	if !k.begin(c, frame) {
		return c.fail(k.gr.Err().Error())
	}
	for g := uint32(0); k.gr.NextGroup(&k.group); g++ {
		hostEnter(g)
		k.ctx.key, k.ctx.index = k.group.Key, g
		k.ctx.base = Record{Key: k.group.Key}
		if err := k.runMigrate(f); err != nil {
			c.out = abi.AppendEntryError(c.out, g, err.Error())
			c.count++
		}
	}
	return k.end(c)
}

// runMigrate is runProcess for a migrate_state function.
func (k *keyedCall) runMigrate(f func(*Context, []byte) error) (err error) {
	k.ctx.active = true
	defer k.recover(&err)
	return f(&k.ctx, k.ctx.key)
}
