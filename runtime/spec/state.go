package spec

import "fmt"

// StateTTL overrides the TTL of one state an operator's module declares, as
// Flink's StateTtlConfig.
type StateTTL struct {
	// State is the state's name in the module's self-description.
	State string `json:"state" required:"true"`
	// TTL is the time to live; 0s turns TTL off for the state.
	TTL Duration `json:"ttl"`
	// UpdateType is on_create_and_write (when empty) or on_read_and_write.
	UpdateType string `json:"update_type,omitempty"`
	// Visibility is never_return_expired (when empty) or
	// return_expired_if_not_cleaned_up.
	Visibility string `json:"visibility,omitempty"`
}

// keyedState checks on_timer and state_ttl, which only keyed functions with
// state use.
func (v *validator) keyedState(p string, op *Operator) {
	if op.OnTimer != "" && op.Process == nil && op.BroadcastProcess == nil {
		v.fail(p+".on_timer", "only used with process or broadcast_process")
	}
	if len(op.StateTTL) > 0 && op.Process == nil && op.ProcessWindow == nil && op.BroadcastProcess == nil {
		v.fail(p+".state_ttl", "only used with process, process_window or broadcast_process")
	}
	seen := map[string]bool{}
	for i, t := range op.StateTTL {
		q := fmt.Sprintf("%s.state_ttl[%d]", p, i)
		switch {
		case t.State == "":
			v.fail(q+".state", "required")
		case seen[t.State]:
			v.fail(q+".state", "state %q is set twice", t.State)
		}
		seen[t.State] = true
		v.notNegative(q+".ttl", t.TTL)
		if t.UpdateType != "" {
			v.oneOf(q+".update_type", t.UpdateType, ttlUpdateTypes...)
		}
		if t.Visibility != "" {
			v.oneOf(q+".visibility", t.Visibility, ttlVisibilities...)
		}
	}
}
