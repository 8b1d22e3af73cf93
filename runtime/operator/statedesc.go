package operator

import (
	"fmt"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/spec"
	"wasmstream.io/platform/state"
)

// StateDescriptors are a module's declared states with the job's TTL
// overrides applied; a state's id is its index in the description.
func StateDescriptors(desc abi.Description, overrides []spec.StateTTL) ([]state.Descriptor, error) {
	out := make([]state.Descriptor, len(desc.States))
	for i, st := range desc.States {
		kind, err := state.ParseKind(st.Kind)
		if err != nil {
			return nil, err
		}
		out[i] = state.Descriptor{Name: st.Name, Kind: kind}
		if st.TTL != "" {
			if out[i].TTL.TTL, err = time.ParseDuration(st.TTL); err != nil {
				return nil, fmt.Errorf("state %q: ttl: %w", st.Name, err)
			}
		}
	}
	for _, o := range overrides {
		i := desc.LookupState(o.State)
		if i < 0 {
			return nil, fmt.Errorf("state_ttl: the module declares no state %q", o.State)
		}
		update, err := state.ParseUpdateType(o.UpdateType)
		if err != nil {
			return nil, fmt.Errorf("state_ttl %q: update_type: %w", o.State, err)
		}
		visibility, err := state.ParseVisibility(o.Visibility)
		if err != nil {
			return nil, fmt.Errorf("state_ttl %q: visibility: %w", o.State, err)
		}
		out[i].TTL = state.TTL{TTL: o.TTL.Duration, Update: update, Visibility: visibility}
	}
	return out, nil
}
