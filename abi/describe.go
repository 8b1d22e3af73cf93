package abi

import (
	"encoding/json"
	"fmt"
	"time"
)

// Kind is what a function does with a frame, and so which output entries it
// may write.
type Kind string

// Kinds of ABI v1, specified in docs/ABI.md.
const (
	KindMap       Kind = "map"
	KindFilter    Kind = "filter"
	KindFlatMap   Kind = "flat_map"
	KindKey       Kind = "key"
	KindTimestamp Kind = "timestamp"

	KindWatermark     Kind = "watermark"
	KindAggregate     Kind = "aggregate"
	KindReduce        Kind = "reduce"
	KindWindowProcess Kind = "window_process"
	KindSessionGap    Kind = "session_gap"
	KindJoin          Kind = "join"
	KindCoGroup       Kind = "co_group"
	KindProcess       Kind = "process"
	KindOnTimer       Kind = "on_timer"
	// KindProcessBroadcast is the broadcast side of a broadcast_process
	// operator (abi/broadcast.go).
	KindProcessBroadcast Kind = "process_broadcast"
)

// Answers reports whether a function of a record kind (map, flat_map,
// filter, key, timestamp, lookup_request, lookup_result) answers its inputs with entries of tag t, besides
// error entries.
func (k Kind) Answers(t Tag) bool {
	switch k {
	case KindMap, KindFlatMap, KindLookupRequest, KindLookupResult:
		return t == TagRecord
	case KindFilter:
		return t == TagKeep
	case KindKey:
		return t == TagKey
	case KindTimestamp:
		return t == TagTimestamp
	}
	return false
}

// Implemented reports whether the platform runs functions of this kind.
func (k Kind) Implemented() bool {
	switch k {
	case KindMap, KindFilter, KindFlatMap, KindKey, KindTimestamp,
		KindWatermark, KindAggregate, KindReduce, KindWindowProcess, KindSessionGap,
		KindProcess, KindOnTimer, KindProcessBroadcast, KindLookupRequest, KindLookupResult, KindMigrateState,
		KindTrigger, KindEvictor:
		return true
	}
	return false
}

// Known reports whether k is a kind of ABI v1, implemented or reserved.
func (k Kind) Known() bool {
	switch k {
	case KindMap, KindFilter, KindFlatMap, KindKey, KindTimestamp,
		KindWatermark, KindAggregate, KindReduce, KindWindowProcess, KindSessionGap,
		KindJoin, KindCoGroup, KindProcess, KindOnTimer, KindProcessBroadcast, KindLookupRequest, KindLookupResult, KindMigrateState,
		KindTrigger, KindEvictor:
		return true
	}
	return false
}

// Function is one entry of a module's self-description. Its index in
// Description.Functions is the function argument of ExportCall.
type Function struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
}

// State is a named piece of keyed state a module declares it uses: its kind
// (StateValue, StateList, StateMap) and an optional default TTL (a Go
// duration) that the job spec may override.
type State struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	TTL  string `json:"ttl,omitempty"`
	// Broadcast marks a broadcast state (abi/broadcast.go): a map every
	// subtask of a broadcast_process operator holds whole.
	Broadcast bool `json:"broadcast,omitempty"`
	// Retired marks a state of an earlier version kept only to be
	// converted at a restore by the migrate_state function (abi/migrate.go).
	Retired bool `json:"retired,omitempty"`
}

// Description is the JSON a module returns from ExportDescribe.
type Description struct {
	ABI       int        `json:"abi"`
	Functions []Function `json:"functions"`
	States    []State    `json:"states,omitempty"`
}

// ParseDescription decodes and checks a self-description: the ABI version
// matches, every function has a unique non-empty name and a known kind.
func ParseDescription(data []byte) (Description, error) {
	var d Description
	if err := json.Unmarshal(data, &d); err != nil {
		return Description{}, fmt.Errorf("self-description: %w", err)
	}
	if d.ABI != Version {
		return Description{}, fmt.Errorf("self-description: abi %d, want %d", d.ABI, Version)
	}
	seen := make(map[string]bool, len(d.Functions))
	for i, f := range d.Functions {
		if f.Name == "" {
			return Description{}, fmt.Errorf("self-description: functions[%d]: empty name", i)
		}
		if seen[f.Name] {
			return Description{}, fmt.Errorf("self-description: functions[%d]: duplicate name %q", i, f.Name)
		}
		seen[f.Name] = true
		if !f.Kind.Known() {
			return Description{}, fmt.Errorf("self-description: function %q: unknown kind %q", f.Name, f.Kind)
		}
	}
	states := make(map[string]bool, len(d.States))
	for i, st := range d.States {
		if st.Name == "" || states[st.Name] {
			return Description{}, fmt.Errorf("self-description: states[%d]: empty or duplicate name %q", i, st.Name)
		}
		states[st.Name] = true
		if st.Kind != StateValue && st.Kind != StateList && st.Kind != StateMap {
			return Description{}, fmt.Errorf("self-description: state %q: kind %q, want value, list or map", st.Name, st.Kind)
		}
		if err := checkBroadcastState(st); err != nil {
			return Description{}, fmt.Errorf("self-description: %w", err)
		}
		if st.TTL != "" {
			if ttl, err := time.ParseDuration(st.TTL); err != nil || ttl <= 0 {
				return Description{}, fmt.Errorf("self-description: state %q: ttl %q is not a positive duration", st.Name, st.TTL)
			}
		}
	}
	if err := checkMigration(d); err != nil {
		return Description{}, fmt.Errorf("self-description: %w", err)
	}
	return d, nil
}

// LookupState returns the index of the named state, or -1.
func (d Description) LookupState(name string) int {
	for i, st := range d.States {
		if st.Name == name {
			return i
		}
	}
	return -1
}

// Lookup returns the index of the named function, or -1.
func (d Description) Lookup(name string) int {
	for i, f := range d.Functions {
		if f.Name == name {
			return i
		}
	}
	return -1
}
