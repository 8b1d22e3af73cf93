package abi

import (
	"slices"
	"strings"
	"testing"
)

// Retired states come with exactly one migrate_state function and are not
// broadcast; MigrateFunction and RetiredStates find them.
func TestMigrationInDescriptions(t *testing.T) {
	const process = `{"name":"p","kind":"process"}`
	tests := []struct {
		name      string
		functions string
		states    string
		want      string
		fn        int
		retired   []int
	}{
		{"retired and migrate", process + `,{"name":"m","kind":"migrate_state"}`,
			`[{"name":"new","kind":"map"},{"name":"old","kind":"value","retired":true}]`, "", 1, []int{1}},
		{"migrate without retired states", `{"name":"m","kind":"migrate_state"},` + process,
			`[{"name":"s","kind":"value"}]`, "", 0, nil},
		{"no migration", process, `[{"name":"s","kind":"value"}]`, "", -1, nil},
		{"retired without migrate", process, `[{"name":"old","kind":"value","retired":true}]`,
			`state "old": a retired state needs a migrate_state function to convert it`, 0, nil},
		{"two migrate functions", process + `,{"name":"m","kind":"migrate_state"},{"name":"n","kind":"migrate_state"}`,
			`[{"name":"old","kind":"value","retired":true}]`, `functions[2]: a second migrate_state function "n" ("m" is one)`, 0, nil},
		{"retired broadcast", `{"name":"b","kind":"process_broadcast"},{"name":"m","kind":"migrate_state"}`,
			`[{"name":"rules","kind":"map","broadcast":true,"retired":true}]`, `state "rules": a broadcast state cannot be retired`, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDescription([]byte(`{"abi":1,"functions":[` + tt.functions + `],"states":` + tt.states + `}`))
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("got %v, want %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := d.MigrateFunction(); got != tt.fn {
				t.Errorf("MigrateFunction() = %d, want %d", got, tt.fn)
			}
			if got := d.RetiredStates(); !slices.Equal(got, tt.retired) {
				t.Errorf("RetiredStates() = %v, want %v", got, tt.retired)
			}
			if !KindMigrateState.Implemented() {
				t.Error("migrate_state is not implemented")
			}
		})
	}
}
