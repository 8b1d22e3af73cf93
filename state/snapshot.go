package state

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
)

// A snapshot is written as one stream, little-endian:
//
//	"WSKS" | u8 version 1 | u32 max parallelism | u32 first | u32 last | i64 time
//	| u16 state count | state*: u16 name length | name | u8 kind | u8 flags (1: TTL stamps)
//	| section* (key groups first..last, in order)
//	| "WSKE"
//	section: u32 key group | chunk* | u32 0
//	chunk:   u32 length (> 0) | entry*  (whole entries)
//	entry:   u8 1 | u16 state | bytes key | bytes namespace | bytes value       (value, list)
//	       | u8 2 | u16 state | bytes key | bytes namespace | bytes user key | bytes value (map entry)
//	       | u8 3 | u8 domain | i64 timestamp | bytes key | bytes namespace      (timer)
//
// where bytes is u32 length | bytes. Values are as the backends store them:
// stamped with their TTL timestamp when the state's flag says so, a list as
// its concatenated elements. Sections let a restore skip the key groups it
// does not own, chunk by chunk, without holding a key group in memory.

const (
	snapMagic   = "WSKS"
	snapTrailer = "WSKE"
	snapVersion = 1

	entryPoint = 1
	entryMap   = 2
	entryTimer = 3

	stateFlagTTL = 1
	// chunkTarget is the chunk size a writer aims for.
	chunkTarget = 64 << 10
)

// Timer is a timer as snapshots keep it; its key group is its key's. The
// timer service that owns timers hands them to Keyed.Snapshot and gets them
// back from Keyed.Restore.
type Timer struct {
	Domain    uint8
	Timestamp int64
	Key       []byte
	Namespace []byte
}

// Snapshot is a consistent view of a Keyed's state (and timers) at the time
// it was taken. Writing it may run on another goroutine while the Keyed goes
// on; Release must follow, once.
type Snapshot struct {
	maxP   int
	rng    Range
	states []stateInfo
	now    int64
	ss     storeSnapshot
	timers [][]Timer
	used   atomic.Bool
}

// SnapshotInfo describes a written snapshot.
type SnapshotInfo struct {
	// Size is the bytes written.
	Size int64
	// Offsets[i] is where key group Range.First+i's section starts.
	Offsets []int64
	// Entries counts the state entries written (a map state's entries one
	// by one); Timers the timers.
	Entries, Timers int64
}

// Snapshot captures the state and the given timers. Its cost is
// proportional to the number of key groups and pages (memory) or to the
// dirty entries of the cache, which it writes first (Pebble), not to the
// state's size. Expired data is left out when the
// snapshot is written.
func (k *Keyed) Snapshot(ctx context.Context, timers []Timer) (*Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("state snapshot: %w", err)
	}
	ss, err := k.st.snapshot()
	if err != nil {
		return nil, fmt.Errorf("state snapshot: %w", err)
	}
	s := &Snapshot{maxP: k.maxP, rng: k.rng, states: k.states, now: k.clock.Now(), ss: ss, timers: make([][]Timer, k.rng.Len())}
	for _, t := range timers {
		kg := KeyGroup(t.Key, k.maxP)
		if !k.rng.Contains(kg) {
			ss.release()
			return nil, fmt.Errorf("state snapshot: timer key %q in key group %d, own %s: %w", t.Key, kg, k.rng, ErrKeyGroup)
		}
		t.Key, t.Namespace = slices.Clone(t.Key), slices.Clone(t.Namespace)
		s.timers[kg-k.rng.First] = append(s.timers[kg-k.rng.First], t)
	}
	return s, nil
}

// Range is the key groups the snapshot covers.
func (s *Snapshot) Range() Range { return s.rng }

// Release frees what the snapshot holds (the memory backend's shared pages
// become writable in place again). It may be called more than once.
func (s *Snapshot) Release() {
	s.ss.release()
	s.timers = nil
}

// errSnapshotUsed is returned by a second WriteTo.
var errSnapshotUsed = errors.New("state snapshot: already written")

// WriteTo writes the snapshot to w. It may be called once.
func (s *Snapshot) WriteTo(ctx context.Context, w io.Writer) (SnapshotInfo, error) {
	if s.used.Swap(true) {
		return SnapshotInfo{}, errSnapshotUsed
	}
	sw := &snapWriter{s: s, w: bufio.NewWriterSize(w, 64<<10)}
	sw.header()
	info := SnapshotInfo{Offsets: make([]int64, s.rng.Len())}
	for kg := s.rng.First; kg <= s.rng.Last && sw.err == nil; kg++ {
		if err := ctx.Err(); err != nil {
			return SnapshotInfo{}, fmt.Errorf("state snapshot: %w", err)
		}
		info.Offsets[kg-s.rng.First] = sw.n
		sw.section(kg)
	}
	sw.write([]byte(snapTrailer))
	if sw.err == nil {
		sw.err = sw.w.Flush()
	}
	if sw.err != nil {
		return SnapshotInfo{}, fmt.Errorf("state snapshot: %w", sw.err)
	}
	info.Size, info.Entries, info.Timers = sw.n, sw.entries, sw.timers
	return info, nil
}

type snapWriter struct {
	s       *Snapshot
	w       *bufio.Writer
	n       int64
	err     error
	chunk   []byte
	scratch []byte
	entries int64
	timers  int64
}

func (sw *snapWriter) write(b []byte) {
	if sw.err != nil {
		return
	}
	n, err := sw.w.Write(b)
	sw.n += int64(n)
	sw.err = err
}

func (sw *snapWriter) header() {
	s := sw.s
	b := append([]byte(snapMagic), snapVersion)
	b = binary.LittleEndian.AppendUint32(b, uint32(s.maxP))
	b = binary.LittleEndian.AppendUint32(b, uint32(s.rng.First))
	b = binary.LittleEndian.AppendUint32(b, uint32(s.rng.Last))
	b = binary.LittleEndian.AppendUint64(b, uint64(s.now))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(s.states)))
	for _, st := range s.states {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(st.name)))
		b = append(b, st.name...)
		var flags byte
		if st.ttl > 0 {
			flags |= stateFlagTTL
		}
		b = append(b, byte(st.kind), flags)
	}
	sw.write(b)
}

// section writes key group kg's entries and timers.
func (sw *snapWriter) section(kg int) {
	s := sw.s
	sw.write(binary.LittleEndian.AppendUint32(nil, uint32(kg)))
	sw.chunk = sw.chunk[:0]
	err := s.ss.each(kg, func(k, uk, v []byte, sub bool) error {
		id := stateOf(k)
		st := &s.states[id]
		key, ns, _, ok := splitComposite(k)
		if !ok {
			return fmt.Errorf("malformed stored key %x", k)
		}
		if sub {
			if st.ttl > 0 && st.stampExpired(v, s.now) {
				return nil
			}
			sw.chunk = append(sw.chunk, entryMap)
			sw.chunk = binary.LittleEndian.AppendUint16(sw.chunk, id)
			sw.chunk = appendLen(appendLen(appendLen(appendLen(sw.chunk, key), ns), uk), v)
		} else {
			keep, drop := st.prunePoint(v, s.now, sw.scratch)
			if drop {
				return nil
			}
			if len(keep) != len(v) {
				sw.scratch = keep
			}
			sw.chunk = append(sw.chunk, entryPoint)
			sw.chunk = binary.LittleEndian.AppendUint16(sw.chunk, id)
			sw.chunk = appendLen(appendLen(appendLen(sw.chunk, key), ns), keep)
		}
		sw.entries++
		sw.flushChunk(false)
		return sw.err
	})
	if err != nil && sw.err == nil {
		sw.err = err
	}
	for _, t := range s.timers[kg-s.rng.First] {
		sw.chunk = append(sw.chunk, entryTimer, t.Domain)
		sw.chunk = binary.LittleEndian.AppendUint64(sw.chunk, uint64(t.Timestamp))
		sw.chunk = appendLen(appendLen(sw.chunk, t.Key), t.Namespace)
		sw.timers++
		sw.flushChunk(false)
	}
	sw.flushChunk(true)
	sw.write([]byte{0, 0, 0, 0})
}

// flushChunk writes the pending chunk once it is big enough, or when the
// section ends.
func (sw *snapWriter) flushChunk(end bool) {
	if len(sw.chunk) == 0 || !end && len(sw.chunk) < chunkTarget {
		return
	}
	sw.write(binary.LittleEndian.AppendUint32(nil, uint32(len(sw.chunk))))
	sw.write(sw.chunk)
	sw.chunk = sw.chunk[:0]
}
