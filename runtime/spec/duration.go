package spec

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a Go duration string in the spec ("100ms", "5s", "-1ms").
// It marshals back to that form, so a Job re-marshalled with encoding/json
// is a spec that Parse accepts.
type Duration struct{ time.Duration }

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.String())
}

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: want a string like \"100ms\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("invalid duration %q", s)
	}
	d.Duration = v
	return nil
}
