package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Backend names.
const (
	BackendMemory = "memory"
	BackendPebble = "pebble"
)

// Defaults of Config.
const (
	// DefaultCleanupSize is how many entries incremental cleanup checks per
	// state access, as Flink's cleanupIncrementally(5, false).
	DefaultCleanupSize = 5
	// DefaultCacheBytes is the size of the Pebble backend's cache of recent
	// entries, per subtask.
	DefaultCacheBytes = 32 << 20
	// DefaultSweepInterval is how often the Pebble backend's sweeper drops
	// expired entries.
	DefaultSweepInterval = time.Minute
	// MaxKeyGroups is the largest max parallelism a backend supports: key
	// groups are stored as 16-bit numbers.
	MaxKeyGroups = 1 << 15
)

// Config configures a Keyed.
type Config struct {
	// Backend is BackendMemory (when empty) or BackendPebble.
	Backend string
	// Dir is the Pebble backend's directory, which it owns: Open clears it
	// and Close removes it.
	Dir string
	// MaxParallelism is the number of key groups.
	MaxParallelism int
	// Range is the key groups this subtask owns.
	Range Range
	// States are the declared states; a state's id is its index here.
	States []Descriptor
	// Clock is TTL's processing-time clock; nil means WallClock.
	Clock Clock
	// CleanupSize is how many entries the memory backend's incremental
	// cleanup checks per state access when a state has TTL; 0 means
	// DefaultCleanupSize, negative turns it off.
	CleanupSize int
	// Budget bounds the memory backend's bytes; nil means no bound.
	Budget *Budget
	// CacheBytes bounds the Pebble backend's cache of recent value and
	// list entries, in bytes, apart from Budget; 0 means
	// DefaultCacheBytes, negative turns the cache off.
	CacheBytes int64
	// Pebble tunes the Pebble backend's database; its zero value is the
	// defaults.
	Pebble PebbleConfig
	// SweepInterval is the Pebble backend's background cleanup period; 0
	// means DefaultSweepInterval, negative turns it off.
	SweepInterval time.Duration
	// Logger receives the Pebble backend's errors; nil means slog.Default().
	Logger *slog.Logger
	// OnlyKey, when not nil, makes Restore keep the entries and timers of
	// this one key and skip every other key's: replaying a key loads its
	// state alone.
	OnlyKey []byte
}

// Keyed is the keyed state of one subtask: every declared state, for the
// keys of the key groups it owns. Calls act on the current key, set by
// SetKey, and the current namespace (empty, or a window), set by
// SetNamespace. A state is named by its id, its index in Config.States.
//
// A Keyed belongs to one goroutine. Byte slices it returns are valid until
// its next call; slices passed to it are copied.
type Keyed struct {
	backend string
	states  []stateInfo
	maxP    int
	rng     Range
	clock   Clock
	st      store
	cleanup int
	// onlyKey is Config.OnlyKey.
	onlyKey []byte

	hasKey bool
	kg     int
	key    []byte
	ns     []byte
	// ck is the composite key of the current key and namespace; its first
	// two bytes are set to the state id of each access.
	ck []byte
	// out, tmp, dels and upds are scratch for results and rewrites.
	out, tmp, dels, upds []byte
}

// Open makes an empty Keyed.
func Open(cfg Config) (*Keyed, error) {
	if cfg.MaxParallelism < 1 || cfg.MaxParallelism > MaxKeyGroups {
		return nil, fmt.Errorf("state: max parallelism %d, want 1..%d", cfg.MaxParallelism, MaxKeyGroups)
	}
	if cfg.Range.First < 0 || cfg.Range.Last >= cfg.MaxParallelism {
		return nil, fmt.Errorf("state: key groups %s outside [0, %d)", cfg.Range, cfg.MaxParallelism)
	}
	if len(cfg.States) > 1<<16 {
		return nil, fmt.Errorf("state: %d states, at most %d", len(cfg.States), 1<<16)
	}
	k := &Keyed{backend: cfg.Backend, maxP: cfg.MaxParallelism, rng: cfg.Range, clock: cfg.Clock, cleanup: cfg.CleanupSize, onlyKey: cfg.OnlyKey}
	if k.backend == "" {
		k.backend = BackendMemory
	}
	if k.clock == nil {
		k.clock = WallClock
	}
	if k.cleanup == 0 {
		k.cleanup = DefaultCleanupSize
	}
	names := make(map[string]bool, len(cfg.States))
	for _, d := range cfg.States {
		if d.Name == "" || names[d.Name] {
			return nil, fmt.Errorf("state: empty or duplicate state name %q", d.Name)
		}
		names[d.Name] = true
		if d.Kind < KindValue || d.Kind > KindMap {
			return nil, fmt.Errorf("state %q: unknown kind %d", d.Name, d.Kind)
		}
		k.states = append(k.states, newStateInfo(d))
	}
	if !anyTTL(k.states) {
		k.cleanup = -1
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	switch k.backend {
	case BackendMemory:
		k.st = newMemStore(k.states, k.clock, k.rng, cfg.Budget)
	case BackendPebble:
		sweep := cfg.SweepInterval
		if sweep == 0 {
			sweep = DefaultSweepInterval
		}
		cache := cfg.CacheBytes
		if cache == 0 {
			cache = DefaultCacheBytes
		}
		k.cleanup = -1
		st, err := openPebble(k.states, k.clock, cfg.Dir, cfg.Pebble.withDefaults(), cache, sweep, log)
		if err != nil {
			return nil, err
		}
		k.st = st
	default:
		return nil, fmt.Errorf("state: backend %q, want %s or %s", k.backend, BackendMemory, BackendPebble)
	}
	return k, nil
}

// Bytes is the memory the backend accounts against Budget: 0 for Pebble,
// whose cache CacheBytes bounds instead.
func (k *Keyed) Bytes() int64 { return k.st.bytes() }

// BudgetBytes is what the backend has reserved from Budget now: Bytes
// rounded up to the reservation chunks, 0 for Pebble. Unlike Bytes it is
// safe to call while another goroutine uses the state.
func (k *Keyed) BudgetBytes() int64 { return k.st.budgetBytes() }

// Close releases the backend. Snapshots taken before stay readable until
// released, except the Pebble backend's, which Close ends.
func (k *Keyed) Close() error { return k.st.close() }

// ErrKeyGroup is wrapped by SetKey's error for a key of another subtask.
var ErrKeyGroup = errors.New("key outside the subtask's key groups")

// SetKey makes key the current key and clears the namespace. A key whose
// key group the Keyed does not own is an error: it was routed wrongly.
func (k *Keyed) SetKey(key []byte) error {
	kg := KeyGroup(key, k.maxP)
	if !k.rng.Contains(kg) {
		k.hasKey = false
		return fmt.Errorf("state: key %q in key group %d, own %s: %w", key, kg, k.rng, ErrKeyGroup)
	}
	k.kg, k.hasKey = kg, true
	k.key = append(k.key[:0], key...)
	k.ns = k.ns[:0]
	k.ck = compositeKey(k.ck[:0], 0, k.key, nil)
	return nil
}

// SetNamespace scopes later accesses to ns within the current key (a
// window's bytes); empty is the key's own state.
func (k *Keyed) SetNamespace(ns []byte) {
	k.ns = append(k.ns[:0], ns...)
	k.ck = compositeKey(k.ck[:0], 0, k.key, k.ns)
}

// access checks a state access and returns the state and its composite key.
// It runs the incremental cleanup first, so that the access's result stays
// valid.
func (k *Keyed) access(id int, kind Kind) (*stateInfo, []byte, error) {
	if id < 0 || id >= len(k.states) {
		return nil, nil, fmt.Errorf("state: no state %d (%d declared)", id, len(k.states))
	}
	st := &k.states[id]
	if kind != 0 && st.kind != kind {
		return nil, nil, fmt.Errorf("state %q: a %s state, not a %s state", st.name, st.kind, kind)
	}
	if !k.hasKey {
		return nil, nil, fmt.Errorf("state %q: no current key", st.name)
	}
	if k.cleanup > 0 {
		if err := k.st.sweep(k.cleanup); err != nil {
			return nil, nil, fmt.Errorf("state %q: cleanup: %w", st.name, err)
		}
	}
	binary.BigEndian.PutUint16(k.ck, uint16(id))
	return st, k.ck, nil
}

func wrap(st *stateInfo, err error) error {
	if err != nil {
		return fmt.Errorf("state %q: %w", st.name, err)
	}
	return nil
}

// Value returns the value of a value state.
func (k *Keyed) Value(id int) ([]byte, bool, error) {
	st, ck, err := k.access(id, KindValue)
	if err != nil {
		return nil, false, err
	}
	v, ok, err := k.st.get(k.kg, ck)
	if err != nil || !ok {
		return nil, false, wrap(st, err)
	}
	if st.ttl == 0 {
		return v, true, nil
	}
	data, ok, act := k.checkStamped(st, v)
	switch act {
	case actRemove:
		err = k.st.del(k.kg, ck)
	case actRestamp:
		err = k.st.put(k.kg, ck, k.tmp)
	}
	return data, ok, wrap(st, err)
}

// ttlAction is what checkStamped asks the caller to do with the entry.
type ttlAction uint8

const (
	actNone ttlAction = iota
	// actRemove: the entry expired; remove it.
	actRemove
	// actRestamp: store k.tmp, the entry with a new timestamp.
	actRestamp
)

// checkStamped applies TTL to a stamped value read from the store: an
// expired one is to be removed (and is returned only under
// ReturnExpiredIfNotCleanedUp), a live one restamped under OnReadAndWrite.
func (k *Keyed) checkStamped(st *stateInfo, v []byte) ([]byte, bool, ttlAction) {
	now := k.clock.Now()
	if st.stampExpired(v, now) {
		k.out = append(k.out[:0], v[tsLen:]...)
		return k.out, st.returnExpired, actRemove
	}
	if !st.onRead {
		return v[tsLen:], true, actNone
	}
	k.tmp = stamp(k.tmp[:0], now, v[tsLen:])
	return k.tmp[tsLen:], true, actRestamp
}

// SetValue sets the value of a value state.
func (k *Keyed) SetValue(id int, v []byte) error {
	st, ck, err := k.access(id, KindValue)
	if err != nil {
		return err
	}
	if st.ttl > 0 {
		k.tmp = stamp(k.tmp[:0], k.clock.Now(), v)
		v = k.tmp
	}
	return wrap(st, k.st.put(k.kg, ck, v))
}

// Clear removes a state of any kind for the current key and namespace.
func (k *Keyed) Clear(id int) error {
	st, ck, err := k.access(id, 0)
	if err != nil {
		return err
	}
	if st.kind == KindMap {
		return wrap(st, k.st.subClear(k.kg, ck))
	}
	return wrap(st, k.st.del(k.kg, ck))
}

// Append adds v at the end of a list state.
func (k *Keyed) Append(id int, v []byte) error {
	st, ck, err := k.access(id, KindList)
	if err != nil {
		return err
	}
	var now int64
	if st.ttl > 0 {
		now = k.clock.Now()
	}
	k.tmp = st.appendElement(k.tmp[:0], now, v)
	return wrap(st, k.st.appendTo(k.kg, ck, k.tmp))
}

// List returns a list state's elements in order, encoded as the ABI's list
// without its count: (u32 length | bytes)*, little-endian.
func (k *Keyed) List(id int) (count int, elems []byte, err error) {
	st, ck, err := k.access(id, KindList)
	if err != nil {
		return 0, nil, err
	}
	v, ok, err := k.st.get(k.kg, ck)
	if err != nil || !ok {
		return 0, nil, wrap(st, err)
	}
	if st.ttl == 0 {
		for rest := v; len(rest) > 0; count++ {
			if _, _, rest, ok = st.nextElement(rest); !ok {
				return 0, nil, fmt.Errorf("state %q: malformed stored list", st.name)
			}
		}
		return count, v, nil
	}
	now := k.clock.Now()
	k.out, k.tmp = k.out[:0], k.tmp[:0]
	changed := false
	for rest := v; len(rest) > 0; {
		ts, data, next, ok := st.nextElement(rest)
		if !ok {
			return 0, nil, fmt.Errorf("state %q: malformed stored list", st.name)
		}
		rest = next
		if st.expired(ts, now) {
			changed = true
			if !st.returnExpired {
				continue
			}
		} else {
			if st.onRead {
				ts, changed = now, true
			}
			k.tmp = st.appendElement(k.tmp, ts, data)
		}
		k.out = binary.LittleEndian.AppendUint32(k.out, uint32(len(data)))
		k.out = append(k.out, data...)
		count++
	}
	switch {
	case !changed:
	case len(k.tmp) == 0:
		err = k.st.del(k.kg, ck)
	default:
		err = k.st.put(k.kg, ck, k.tmp)
	}
	return count, k.out, wrap(st, err)
}

// MapGet returns the value under uk in a map state.
func (k *Keyed) MapGet(id int, uk []byte) ([]byte, bool, error) {
	st, ck, err := k.access(id, KindMap)
	if err != nil {
		return nil, false, err
	}
	v, ok, err := k.st.subGet(k.kg, ck, uk)
	if err != nil || !ok {
		return nil, false, wrap(st, err)
	}
	if st.ttl == 0 {
		return v, true, nil
	}
	data, ok, act := k.checkStamped(st, v)
	switch act {
	case actRemove:
		err = k.st.subDel(k.kg, ck, uk)
	case actRestamp:
		err = k.st.subPut(k.kg, ck, uk, k.tmp)
	}
	return data, ok, wrap(st, err)
}

// MapPut sets the value under uk in a map state.
func (k *Keyed) MapPut(id int, uk, v []byte) error {
	st, ck, err := k.access(id, KindMap)
	if err != nil {
		return err
	}
	if st.ttl > 0 {
		k.tmp = stamp(k.tmp[:0], k.clock.Now(), v)
		v = k.tmp
	}
	return wrap(st, k.st.subPut(k.kg, ck, uk, v))
}

// MapRemove removes uk from a map state.
func (k *Keyed) MapRemove(id int, uk []byte) error {
	st, ck, err := k.access(id, KindMap)
	if err != nil {
		return err
	}
	return wrap(st, k.st.subDel(k.kg, ck, uk))
}

// MapEntries returns a map state's entries in user key order, encoded as the
// ABI's map without its count: (u32 key length | key | u32 value length |
// value)*, little-endian.
func (k *Keyed) MapEntries(id int) (count int, entries []byte, err error) {
	st, ck, err := k.access(id, KindMap)
	if err != nil {
		return 0, nil, err
	}
	var now int64
	if st.ttl > 0 {
		now = k.clock.Now()
	}
	k.out, k.dels, k.upds = k.out[:0], k.dels[:0], k.upds[:0]
	err = k.st.subRange(k.kg, ck, func(uk, v []byte) error {
		if st.ttl > 0 {
			expired := st.stampExpired(v, now)
			v = v[tsLen:]
			switch {
			case expired:
				k.dels = appendLen(k.dels, uk)
				if !st.returnExpired {
					return nil
				}
			case st.onRead:
				k.upds = appendLen(appendLen(k.upds, uk), v)
			}
		}
		k.out = appendLen(appendLen(k.out, uk), v)
		count++
		return nil
	})
	if err != nil {
		return 0, nil, wrap(st, err)
	}
	for rest := k.dels; len(rest) > 0; {
		var uk []byte
		uk, rest = splitLen(rest)
		if err := k.st.subDel(k.kg, ck, uk); err != nil {
			return 0, nil, wrap(st, err)
		}
	}
	for rest := k.upds; len(rest) > 0; {
		var uk, v []byte
		uk, rest = splitLen(rest)
		v, rest = splitLen(rest)
		k.tmp = stamp(k.tmp[:0], now, v)
		if err := k.st.subPut(k.kg, ck, uk, k.tmp); err != nil {
			return 0, nil, wrap(st, err)
		}
	}
	return count, k.out, nil
}

// appendLen appends u32 length | b, little-endian.
func appendLen(dst, b []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

// splitLen undoes appendLen on well-formed input.
func splitLen(b []byte) (head, rest []byte) {
	n := binary.LittleEndian.Uint32(b)
	return b[4 : 4+n], b[4+n:]
}

// Sweep drops every expired entry now.
func (k *Keyed) Sweep() error {
	if !anyTTL(k.states) {
		return nil
	}
	return k.st.sweep(-1)
}
