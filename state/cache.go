package state

import (
	"bytes"
	"hash/maphash"
)

// entryCache holds recent point entries (value and list states) of the
// Pebble backend in memory, decoded, so that a key's reads and writes
// between two evictions do not reach Pebble. It is write-back: a write only
// marks its entry dirty, and the backend writes dirty entries to Pebble when
// they are evicted and before a snapshot or a sweep. It knows absent keys
// too (a deletion not yet written, or a read that found nothing).
//
// Memory is bounded by limit, counted as each slot's buffer capacity plus
// slotOverhead. Slots are reused, buffers with them, and found through a
// map from the key's hash, so that hits and steady-state misses allocate
// nothing. Eviction is CLOCK (second chance): an access sets a slot's
// reference bit, and the hand clears it or evicts. The cache belongs to
// its backend and is used under the backend's lock.
type entryCache struct {
	limit int64
	bytes int64
	seed  maphash.Seed
	// index maps a key's hash to the first slot with it; slots of equal
	// hashes are chained by next.
	index map[uint64]int32
	slots []cacheSlot
	free  []int32
	// dirty lists the slots marked queued: every dirty slot, and slots
	// that were dirty since the last flush, each once.
	dirty []int32
	hand  int
}

// cacheSlot is one entry: buf holds the key, then the value.
type cacheSlot struct {
	buf   []byte
	hash  uint64
	klen  int32
	next  int32
	flags uint8
}

const (
	slotLive uint8 = 1 << iota
	slotPresent
	slotDirty
	slotRef
	// slotQueued is kept while a slot is free, so that it is listed once.
	slotQueued
)

// slotOverhead estimates what a slot costs beyond its buffer: the slot, its
// index entry (with the map's spare capacity) and its places in the free
// and dirty lists.
const slotOverhead = 96

// keptBuffer is the largest buffer a freed slot keeps for its next entry.
const keptBuffer = 128

func newEntryCache(limit int64) *entryCache {
	return &entryCache{limit: limit, seed: maphash.MakeSeed(), index: make(map[uint64]int32)}
}

// fits reports whether an entry of key and value sizes may be cached: one
// entry takes at most a sixteenth of the cache, what an eviction frees, so
// that it never has to evict everything else.
func (c *entryCache) fits(klen, vlen int) bool {
	return int64(slotOverhead+klen+vlen) <= c.limit/16
}

// hash is key's hash, which find and insert take.
func (c *entryCache) hash(key []byte) uint64 { return maphash.Bytes(c.seed, key) }

// find returns the slot of key, of hash h, or -1, and marks it used.
func (c *entryCache) find(h uint64, key []byte) int32 {
	i, ok := c.index[h]
	if !ok {
		return -1
	}
	for ; i >= 0; i = c.slots[i].next {
		s := &c.slots[i]
		if bytes.Equal(s.buf[:s.klen], key) {
			s.flags |= slotRef
			return i
		}
	}
	return -1
}

// entry returns slot i's key, value and whether the key is present.
func (c *entryCache) entry(i int32) (key, v []byte, present bool) {
	s := &c.slots[i]
	return s.buf[:s.klen], s.buf[s.klen:], s.flags&slotPresent != 0
}

func (c *entryCache) isDirty(i int32) bool { return c.slots[i].flags&slotDirty != 0 }

// set replaces slot i's value (v may be its current value) and presence.
func (c *entryCache) set(i int32, v []byte, present, dirty bool) {
	s := &c.slots[i]
	before := cap(s.buf)
	s.buf = append(s.buf[:s.klen], v...)
	c.bytes += int64(cap(s.buf) - before)
	c.mark(i, present, dirty)
}

// appendTo adds v to slot i's value, making it present.
func (c *entryCache) appendTo(i int32, v []byte) {
	s := &c.slots[i]
	before := cap(s.buf)
	s.buf = append(s.buf, v...)
	c.bytes += int64(cap(s.buf) - before)
	c.mark(i, true, true)
}

func (c *entryCache) mark(i int32, present, dirty bool) {
	s := &c.slots[i]
	s.flags &^= slotPresent
	if present {
		s.flags |= slotPresent
	}
	if !dirty {
		return
	}
	s.flags |= slotDirty
	if s.flags&slotQueued == 0 {
		s.flags |= slotQueued
		c.dirty = append(c.dirty, i)
	}
}

// insert adds key, of hash h and not cached, in a free slot; the caller
// evicts first when the cache is over its limit.
func (c *entryCache) insert(h uint64, key, v []byte, present, dirty bool) int32 {
	var i int32
	if n := len(c.free); n > 0 {
		i, c.free = c.free[n-1], c.free[:n-1]
	} else {
		c.slots = append(c.slots, cacheSlot{})
		i = int32(len(c.slots) - 1)
	}
	s := &c.slots[i]
	before := cap(s.buf)
	if n := len(key) + len(v); cap(s.buf) < n {
		s.buf = make([]byte, 0, n)
	}
	s.buf = append(append(s.buf[:0], key...), v...)
	s.klen = int32(len(key))
	s.hash = h
	s.flags = s.flags&slotQueued | slotLive | slotRef
	c.bytes += int64(cap(s.buf)-before) + slotOverhead
	s.next = -1
	if head, ok := c.index[s.hash]; ok {
		s.next = head
	}
	c.index[s.hash] = i
	c.mark(i, present, dirty)
	return i
}

// remove frees slot i, dirty or not: the caller has written what it must.
func (c *entryCache) remove(i int32) {
	s := &c.slots[i]
	if head := c.index[s.hash]; head == i {
		if s.next < 0 {
			delete(c.index, s.hash)
		} else {
			c.index[s.hash] = s.next
		}
	} else {
		prev := head
		for c.slots[prev].next != i {
			prev = c.slots[prev].next
		}
		c.slots[prev].next = s.next
	}
	c.bytes -= slotOverhead
	if cap(s.buf) > keptBuffer {
		c.bytes -= int64(cap(s.buf))
		s.buf = nil
	}
	s.flags &= slotQueued
	s.next = -1
	c.free = append(c.free, i)
}

// over reports whether the cache needs evicting.
func (c *entryCache) over() bool { return c.bytes > c.limit }

// evictTarget is the size eviction brings the cache down to: a sixteenth
// below the limit, so that evictions, and the writes of their dirty
// entries, come in batches.
func (c *entryCache) evictTarget() int64 { return c.limit - c.limit/16 }

// victim picks the next slot to evict other than keep, or -1 when there is
// none.
func (c *entryCache) victim(keep int32) int32 {
	for range 2*len(c.slots) + 1 {
		if c.hand >= len(c.slots) {
			c.hand = 0
			if len(c.slots) == 0 {
				return -1
			}
		}
		s := &c.slots[c.hand]
		i := int32(c.hand)
		c.hand++
		switch {
		case s.flags&slotLive == 0 || i == keep:
		case s.flags&slotRef != 0:
			s.flags &^= slotRef
		default:
			return i
		}
	}
	return -1
}

// flush hands every dirty entry to write and marks it clean. On an error
// the entries not yet handed stay dirty.
func (c *entryCache) flush(write func(key, v []byte, present bool) error) error {
	for n, i := range c.dirty {
		s := &c.slots[i]
		if s.flags&slotDirty != 0 {
			if err := write(s.buf[:s.klen], s.buf[s.klen:], s.flags&slotPresent != 0); err != nil {
				c.dirty = c.dirty[:copy(c.dirty, c.dirty[n:])]
				return err
			}
		}
		s.flags &^= slotDirty | slotQueued
	}
	c.dirty = c.dirty[:0]
	return nil
}
