package broadcast

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"wasmstream.io/platform/abi"
)

// ErrBudget is the error of a broadcast state that outgrew its budget.
var ErrBudget = errors.New("broadcast state budget exceeded")

// entryOverhead is what a map entry costs besides its key and value: the
// map's slot and the two slice headers.
const entryOverhead = 64

// Store holds a subtask's broadcast states, by state index in the
// module's self-description. The broadcast side writes it, the keyed side
// only reads it; both run on the task goroutine.
type Store struct {
	names []string
	// maps are nil for states that are not broadcast states. A value is
	// held by pointer so that overwriting it reuses its bytes and touches
	// no map key.
	maps []map[string]*[]byte
	// enc caches each map's entries in the map_entries layout, in key
	// order; nil when a write made it stale. A cached encoding is never
	// changed in place, so that snapshots may keep it.
	enc   [][]byte
	bytes int64
	limit int64
}

// NewStore makes the empty broadcast states of a module that declares
// states, bounded in bytes by limit (0: unbounded).
func NewStore(states []abi.State, limit int64) *Store {
	s := &Store{names: make([]string, len(states)), maps: make([]map[string]*[]byte, len(states)),
		enc: make([][]byte, len(states)), limit: limit}
	for i, st := range states {
		s.names[i] = st.Name
		if st.Broadcast {
			s.maps[i] = map[string]*[]byte{}
		}
	}
	return s
}

// Has reports whether state i is a broadcast state.
func (s *Store) Has(i uint32) bool { return int(i) < len(s.maps) && s.maps[i] != nil }

// Name is the declared name of state i.
func (s *Store) Name(i uint32) string {
	if int(i) < len(s.names) {
		return s.names[i]
	}
	return fmt.Sprintf("#%d", i)
}

// Bytes is what the broadcast states hold, as the budget counts it.
func (s *Store) Bytes() int64 { return s.bytes }

// Get is the value under k in broadcast state i.
func (s *Store) Get(i uint32, k []byte) ([]byte, bool) {
	if v, ok := s.maps[i][string(k)]; ok {
		return *v, true
	}
	return nil, false
}

// Put sets k to v in broadcast state i, copying both; overwriting a key
// allocates only when the value outgrows the old one.
func (s *Store) Put(i uint32, k, v []byte) error {
	m := s.maps[i]
	old, had := m[string(k)]
	grow := int64(len(v))
	if had {
		grow -= int64(len(*old))
	} else {
		grow += int64(len(k)) + entryOverhead
	}
	if s.limit > 0 && s.bytes+grow > s.limit {
		return fmt.Errorf("broadcast state %q: %w: %d bytes held, %d more asked, budget %d (state.budget in the job spec)",
			s.names[i], ErrBudget, s.bytes, grow, s.limit)
	}
	if had {
		*old = append((*old)[:0], v...)
	} else {
		nv := slices.Clone(v)
		m[string(k)] = &nv
	}
	s.bytes += grow
	s.enc[i] = nil
	return nil
}

// Remove deletes k from broadcast state i.
func (s *Store) Remove(i uint32, k []byte) {
	m := s.maps[i]
	if old, ok := m[string(k)]; ok {
		s.bytes -= int64(len(k)+len(*old)) + entryOverhead
		delete(m, string(k))
		s.enc[i] = nil
	}
}

// Clear empties broadcast state i.
func (s *Store) Clear(i uint32) {
	for k := range s.maps[i] {
		s.Remove(i, []byte(k))
	}
}

// Entries is broadcast state i in the map_entries layout: the entry count
// and (u32 key length | key | u32 value length | value)* in key order.
func (s *Store) Entries(i uint32) (int, []byte) {
	m := s.maps[i]
	if s.enc[i] == nil {
		keys := make([]string, 0, len(m))
		size := 0
		for k, v := range m {
			keys = append(keys, k)
			size += 8 + len(k) + len(*v)
		}
		slices.Sort(keys)
		enc := make([]byte, 0, size)
		for _, k := range keys {
			enc = binary.LittleEndian.AppendUint32(enc, uint32(len(k)))
			enc = append(enc, k...)
			v := *m[k]
			enc = binary.LittleEndian.AppendUint32(enc, uint32(len(v)))
			enc = append(enc, v...)
		}
		s.enc[i] = enc
	}
	return len(m), s.enc[i]
}
