package state

import (
	"fmt"

	"wasmstream.io/platform/abi"
)

// Kind is the kind of a state.
type Kind uint8

// State kinds.
const (
	// KindValue holds one value per key and namespace.
	KindValue Kind = 1
	// KindList holds a list of values, appended to one at a time.
	KindList Kind = 2
	// KindMap holds a map from user keys to values.
	KindMap Kind = 3
)

func (k Kind) String() string {
	switch k {
	case KindValue:
		return abi.StateValue
	case KindList:
		return abi.StateList
	case KindMap:
		return abi.StateMap
	}
	return fmt.Sprintf("kind %d", uint8(k))
}

// ParseKind reads a kind by its ABI name (abi.StateValue, ...).
func ParseKind(s string) (Kind, error) {
	switch s {
	case abi.StateValue:
		return KindValue, nil
	case abi.StateList:
		return KindList, nil
	case abi.StateMap:
		return KindMap, nil
	}
	return 0, fmt.Errorf("state kind %q: want value, list or map", s)
}

// Descriptor declares one state: its name (unique in a Keyed, and what a
// snapshot knows it by), its kind and its TTL.
type Descriptor struct {
	Name string
	Kind Kind
	TTL  TTL
}
