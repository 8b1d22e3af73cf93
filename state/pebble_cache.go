package state

import "github.com/cockroachdb/pebble/v2"

// Point entries of the Pebble backend go through its entryCache when it has
// one; map states' entries go to Pebble directly, so that iterating or
// clearing a map never has to merge the cache in. Every method here runs
// under p.mu.

// cachedGet reads key through the cache, caching what Pebble returns.
func (p *pebbleStore) cachedGet(key []byte) ([]byte, bool, error) {
	c := p.cache
	h := c.hash(key)
	if i := c.find(h, key); i >= 0 {
		p.hits++
		_, v, ok := c.entry(i)
		return v, ok, nil
	}
	p.misses++
	v, ok, err := p.read(key)
	if err != nil || !c.fits(len(key), len(v)) {
		return v, ok, err
	}
	i, err := p.admit(h, key, v, ok, false)
	if err != nil {
		return nil, false, err
	}
	_, v, _ = c.entry(i)
	return v, ok, nil
}

// cachedPut sets key to v (or deletes it when present is false) in the
// cache, or in Pebble when the entry is too big to cache.
func (p *pebbleStore) cachedPut(key, v []byte, present bool) error {
	c := p.cache
	h := c.hash(key)
	i := c.find(h, key)
	if !c.fits(len(key), len(v)) {
		if i >= 0 {
			c.remove(i)
		}
		if present {
			return wrapPebble("set", p.db.Set(key, v, noSync))
		}
		return wrapPebble("delete", p.db.Delete(key, noSync))
	}
	if i < 0 {
		_, err := p.admit(h, key, v, present, true)
		return err
	}
	c.set(i, v, present, true)
	return p.evictOver(i)
}

// cachedAppend adds v to the list at key: in the cache when the list is
// there, else with a Pebble merge, which need not read the list.
func (p *pebbleStore) cachedAppend(key, v []byte) error {
	c := p.cache
	i := c.find(c.hash(key), key)
	if i < 0 {
		return wrapPebble("merge", p.db.Merge(key, v, noSync))
	}
	if _, old, _ := c.entry(i); !c.fits(len(key), len(old)+len(v)) {
		if err := p.uncache(i); err != nil {
			return err
		}
		return wrapPebble("merge", p.db.Merge(key, v, noSync))
	}
	c.appendTo(i, v)
	return p.evictOver(i)
}

// uncache writes slot i's entry to Pebble when it is dirty and frees it.
func (p *pebbleStore) uncache(i int32) error {
	c := p.cache
	if c.isDirty(i) {
		key, v, present := c.entry(i)
		var err error
		if present {
			err = p.db.Set(key, v, noSync)
		} else {
			err = p.db.Delete(key, noSync)
		}
		if err != nil {
			return wrapPebble("write back", err)
		}
	}
	c.remove(i)
	return nil
}

// admit caches key, of hash h and not cached yet, evicting first when the
// cache is full, and again when the new entry's buffer took it over.
func (p *pebbleStore) admit(h uint64, key, v []byte, present, dirty bool) (int32, error) {
	c := p.cache
	if c.bytes+int64(slotOverhead+len(key)+len(v)) > c.limit {
		if err := p.evict(-1); err != nil {
			return -1, err
		}
	}
	i := c.insert(h, key, v, present, dirty)
	return i, p.evictOver(i)
}

// evictOver evicts when the cache is over its limit, keeping slot keep.
func (p *pebbleStore) evictOver(keep int32) error {
	if !p.cache.over() {
		return nil
	}
	return p.evict(keep)
}

// evict brings the cache down to its eviction target, writing the dirty
// entries it evicts in batches of up to flushBatch bytes; it keeps slot keep
// (when not -1).
func (p *pebbleStore) evict(keep int32) error {
	c := p.cache
	b := p.resetBatch()
	for c.bytes > c.evictTarget() {
		i := c.victim(keep)
		if i < 0 {
			break
		}
		if c.isDirty(i) {
			key, v, present := c.entry(i)
			if err := writeEntry(b, key, v, present); err != nil {
				return wrapPebble("evict", err)
			}
		}
		c.remove(i)
		if b.Len() >= flushBatch {
			if err := p.apply(b, "evict"); err != nil {
				return err
			}
			b.Reset()
		}
	}
	return p.apply(b, "evict")
}

// flushCache writes every dirty cached entry to Pebble, so that the
// database alone is the state: before a snapshot or a sweep.
func (p *pebbleStore) flushCache() error {
	if p.cache == nil {
		return nil
	}
	b := p.resetBatch()
	if err := p.cache.flush(func(key, v []byte, present bool) error {
		if err := writeEntry(b, key, v, present); err != nil || b.Len() < flushBatch {
			return err
		}
		err := p.apply(b, "flush")
		b.Reset()
		return err
	}); err != nil {
		return wrapPebble("flush", err)
	}
	return p.apply(b, "flush")
}

// flushBatch is the batch size an eviction or a flush writes at a time, so
// that writing back a large cache takes no large buffer, and so that Pebble
// takes each batch into its memtable: a batch of more than half a memtable
// would become a memtable of its own, sorted apart, flushed at once to a
// table of L0, and reserved from the block cache meanwhile.
const flushBatch = 1 << 20

// dropCached forgets key's cached entry, which must be clean: the caller
// changes it in Pebble.
func (p *pebbleStore) dropCached(key []byte) {
	if p.cache == nil {
		return
	}
	if i := p.cache.find(p.cache.hash(key), key); i >= 0 {
		p.cache.remove(i)
	}
}

func writeEntry(b *pebble.Batch, key, v []byte, present bool) error {
	if present {
		return b.Set(key, v, nil)
	}
	return b.Delete(key, nil)
}

// resetBatch returns the store's batch, emptied.
func (p *pebbleStore) resetBatch() *pebble.Batch {
	if p.batch == nil {
		p.batch = p.db.NewBatch()
	}
	p.batch.Reset()
	return p.batch
}

func (p *pebbleStore) apply(b *pebble.Batch, op string) error {
	if b.Empty() {
		return nil
	}
	return wrapPebble(op, p.db.Apply(b, noSync))
}
