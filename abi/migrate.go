package abi

import "fmt"

// State migration at an upgrade: a module that renames or retypes a state of
// the version it replaces declares the old state again, marked Retired, and
// exports one function of kind migrate_state. After a restore the platform
// calls it once for every key (and namespace) that holds a retired state,
// as a grouped frame whose groups are those keys, each with no records; the
// function reads the retired states through the state imports and writes
// the new ones. The platform then clears the key's retired states. A
// migrate_state function writes no output entries but error entries: an
// error entry for a group (or a trap) fails the restore.
//
// docs/ABI.md specifies it.

// KindMigrateState converts retired states at a restore.
const KindMigrateState Kind = "migrate_state"

// checkMigration checks that retired states come with the one
// migrate_state function that converts them, and are not broadcast.
func checkMigration(d Description) error {
	migrate := -1
	for i, f := range d.Functions {
		if f.Kind != KindMigrateState {
			continue
		}
		if migrate >= 0 {
			return fmt.Errorf("functions[%d]: a second migrate_state function %q (%q is one): a module has at most one", i, f.Name, d.Functions[migrate].Name)
		}
		migrate = i
	}
	for _, st := range d.States {
		if !st.Retired {
			continue
		}
		if st.Broadcast {
			return fmt.Errorf("state %q: a broadcast state cannot be retired", st.Name)
		}
		if migrate < 0 {
			return fmt.Errorf("state %q: a retired state needs a migrate_state function to convert it", st.Name)
		}
	}
	return nil
}

// MigrateFunction returns the index of the module's migrate_state
// function, or -1.
func (d Description) MigrateFunction() int {
	for i, f := range d.Functions {
		if f.Kind == KindMigrateState {
			return i
		}
	}
	return -1
}

// RetiredStates lists the indexes of the description's retired states.
func (d Description) RetiredStates() []int {
	var out []int
	for i, st := range d.States {
		if st.Retired {
			out = append(out, i)
		}
	}
	return out
}
