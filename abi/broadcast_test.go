package abi

import (
	"strings"
	"testing"
)

// A broadcast state is a map without ttl; anything else is refused with
// the state's name, and BroadcastStates lists the marked ones.
func TestBroadcastStatesInDescriptions(t *testing.T) {
	tests := []struct {
		states string
		want   string
	}{
		{`[{"name":"rules","kind":"map","broadcast":true},{"name":"hits","kind":"value"}]`, ""},
		{`[{"name":"rules","kind":"value","broadcast":true}]`, `state "rules": a broadcast state is a map, not a value`},
		{`[{"name":"rules","kind":"map","broadcast":true,"ttl":"1h"}]`, `state "rules": a broadcast state has no ttl`},
	}
	for _, tt := range tests {
		d, err := ParseDescription([]byte(`{"abi":1,"functions":[{"name":"u","kind":"process_broadcast"}],"states":` + tt.states + `}`))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.states, err)
		case tt.want == "":
			if got := d.BroadcastStates(); len(got) != 1 || got[0] != 0 || !KindProcessBroadcast.Implemented() {
				t.Errorf("%s: broadcast states %v", tt.states, got)
			}
		case err == nil || !strings.Contains(err.Error(), tt.want):
			t.Errorf("%s: got %v, want %q", tt.states, err, tt.want)
		}
	}
}
