package state

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// UpdateType says which accesses refresh an entry's TTL timestamp, as
// Flink's StateTtlConfig.UpdateType.
type UpdateType uint8

// Update types.
const (
	// OnCreateAndWrite refreshes the timestamp when the entry is written.
	OnCreateAndWrite UpdateType = iota
	// OnReadAndWrite also refreshes it when the entry is read.
	OnReadAndWrite
)

// Visibility says whether an expired entry that is still stored may be
// returned, as Flink's StateTtlConfig.StateVisibility.
type Visibility uint8

// Visibilities.
const (
	// NeverReturnExpired treats an expired entry as absent.
	NeverReturnExpired Visibility = iota
	// ReturnExpiredIfNotCleanedUp returns an expired entry found before
	// cleanup removed it, and removes it then.
	ReturnExpiredIfNotCleanedUp
)

// Names of the update types and visibilities in job specs.
var (
	updateTypeNames = []string{"on_create_and_write", "on_read_and_write"}
	visibilityNames = []string{"never_return_expired", "return_expired_if_not_cleaned_up"}
)

func (u UpdateType) String() string { return enumName(updateTypeNames, int(u)) }
func (v Visibility) String() string { return enumName(visibilityNames, int(v)) }

func enumName(names []string, i int) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("%d", i)
}

// ParseUpdateType reads an update type by its spec name; "" is
// OnCreateAndWrite.
func ParseUpdateType(s string) (UpdateType, error) {
	i, err := parseEnum(updateTypeNames, s)
	return UpdateType(i), err
}

// ParseVisibility reads a visibility by its spec name; "" is
// NeverReturnExpired.
func ParseVisibility(s string) (Visibility, error) {
	i, err := parseEnum(visibilityNames, s)
	return Visibility(i), err
}

func parseEnum(names []string, s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	for i, n := range names {
		if n == s {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%q is not one of %v", s, names)
}

// TTL is a state's time to live, as Flink's StateTtlConfig: processing time
// based, with the time of an entry's last write (or read, for
// OnReadAndWrite) as its timestamp. An entry expires once TTL has passed
// since then. A zero TTL keeps entries forever.
type TTL struct {
	TTL        time.Duration
	Update     UpdateType
	Visibility Visibility
}

// Enabled reports whether entries expire.
func (t TTL) Enabled() bool { return t.TTL > 0 }

// Clock is the processing-time clock of TTL, in milliseconds since the epoch.
// It must be safe for concurrent use: the Pebble backend's sweeper reads it.
type Clock interface {
	Now() int64
}

// ClockFunc adapts a function to Clock.
type ClockFunc func() int64

// Now calls f.
func (f ClockFunc) Now() int64 { return f() }

// WallClock is the system clock.
var WallClock Clock = ClockFunc(func() int64 { return time.Now().UnixMilli() })

// tsLen is the size of the TTL timestamp stored before a value, a list
// element or a map value of a state with TTL.
const tsLen = 8

// stateInfo is what the backends know about one declared state.
type stateInfo struct {
	name string
	kind Kind
	// ttl is the TTL in milliseconds; 0 disables it.
	ttl           int64
	onRead        bool
	returnExpired bool
}

func newStateInfo(d Descriptor) stateInfo {
	s := stateInfo{name: d.Name, kind: d.Kind}
	if d.TTL.Enabled() {
		s.ttl = max(1, d.TTL.TTL.Milliseconds())
		s.onRead = d.TTL.Update == OnReadAndWrite
		s.returnExpired = d.TTL.Visibility == ReturnExpiredIfNotCleanedUp
	}
	return s
}

// expired reports whether an entry stamped ts has expired at now. An
// expiration time past the int64 range never comes.
func (s *stateInfo) expired(ts, now int64) bool {
	if ts > math.MaxInt64-s.ttl {
		return false
	}
	return ts+s.ttl <= now
}

// stampExpired reports whether the timestamp at the start of v has expired.
func (s *stateInfo) stampExpired(v []byte, now int64) bool {
	return len(v) >= tsLen && s.expired(int64(binary.LittleEndian.Uint64(v)), now)
}

// stamp appends ts and data: a value or map value of a state with TTL.
func stamp(dst []byte, ts int64, data []byte) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, uint64(ts))
	return append(dst, data...)
}

// List elements are stored concatenated: u32 length | bytes, preceded by an
// i64 timestamp for a state with TTL. Without TTL a stored list is exactly
// the elements part of the ABI's list encoding.

// appendElement appends one stored list element.
func (s *stateInfo) appendElement(dst []byte, ts int64, data []byte) []byte {
	if s.ttl > 0 {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(ts))
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(data)))
	return append(dst, data...)
}

// nextElement splits the first stored element off list: its timestamp (0
// without TTL), its data and the rest. ok is false for a malformed list.
func (s *stateInfo) nextElement(list []byte) (ts int64, data, rest []byte, ok bool) {
	if s.ttl > 0 {
		if len(list) < tsLen {
			return 0, nil, nil, false
		}
		ts = int64(binary.LittleEndian.Uint64(list))
		list = list[tsLen:]
	}
	if len(list) < 4 {
		return 0, nil, nil, false
	}
	n := binary.LittleEndian.Uint32(list)
	if uint64(n) > uint64(len(list)-4) {
		return 0, nil, nil, false
	}
	return ts, list[4 : 4+n], list[4+n:], true
}

// validList reports whether list is a well-formed stored list.
func (s *stateInfo) validList(list []byte) bool {
	for len(list) > 0 {
		var ok bool
		if _, _, list, ok = s.nextElement(list); !ok {
			return false
		}
	}
	return true
}

// prunePoint drops what has expired from a stored value or list at now: drop
// is true when nothing is left; otherwise keep is v itself or, when some list
// elements expired, the remaining ones appended to scratch.
func (s *stateInfo) prunePoint(v []byte, now int64, scratch []byte) (keep []byte, drop bool) {
	if s.ttl == 0 {
		return v, false
	}
	if s.kind != KindList {
		return v, s.stampExpired(v, now)
	}
	out, pruned := scratch[:0], false
	for rest := v; len(rest) > 0; {
		ts, data, next, ok := s.nextElement(rest)
		if !ok {
			return v, false
		}
		if s.expired(ts, now) {
			pruned = true
		} else {
			out = s.appendElement(out, ts, data)
		}
		rest = next
	}
	switch {
	case !pruned:
		return v, false
	case len(out) == 0:
		return nil, true
	}
	return out, false
}
