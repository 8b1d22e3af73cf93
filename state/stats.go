package state

// Stats are figures of a keyed state's backend, counted since it opened:
// what benchmarks report and what tells whether the Pebble backend's caches
// are large enough. The memory backend has none of them.
type Stats struct {
	// CacheHits and CacheMisses count the reads of value and list states
	// that the Pebble backend's entry cache answered, and those it sent to
	// Pebble. CacheBytes is what the cache holds now.
	CacheHits, CacheMisses int64
	CacheBytes             int64
	// BlockCacheHits and BlockCacheMisses count the lookups of Pebble's
	// block cache; a miss reads the block from its table's file.
	// BlockCacheBytes is what the block cache holds now.
	BlockCacheHits, BlockCacheMisses int64
	BlockCacheBytes                  int64
	// FilterHits counts the table reads a Bloom filter avoided,
	// FilterMisses the reads it could not.
	FilterHits, FilterMisses int64
	// ReadAmp is the number of places a read may have to look now: the
	// sublevels of L0 and the other non-empty levels.
	ReadAmp int
	// Flushes and Compactions count the memtable flushes and compactions
	// done; FlushedBytes and CompactedBytes are the bytes they wrote.
	Flushes, Compactions         int64
	FlushedBytes, CompactedBytes int64
	// CompactionsInProgress and CompactionDebt are the compactions running
	// now and Pebble's estimate of the bytes still to compact.
	CompactionsInProgress int64
	CompactionDebt        int64
	// MemTables and MemTableBytes are the memtables now allocated,
	// including those waiting for their flush.
	MemTables     int64
	MemTableBytes int64
	// Pebble is Pebble's own report of its metrics, one table per level.
	Pebble string
}

// Stats returns the backend's figures.
func (k *Keyed) Stats() Stats { return k.st.stats() }

func (m *memStore) stats() Stats { return Stats{} }

func (p *pebbleStore) stats() Stats {
	p.mu.Lock()
	s := Stats{CacheHits: p.hits, CacheMisses: p.misses}
	if p.cache != nil {
		s.CacheBytes = p.cache.bytes
	}
	p.mu.Unlock()
	m := p.db.Metrics()
	s.BlockCacheHits, s.BlockCacheMisses, s.BlockCacheBytes = m.BlockCache.Hits, m.BlockCache.Misses, m.BlockCache.Size
	s.FilterHits, s.FilterMisses = m.Filter.Hits, m.Filter.Misses
	s.ReadAmp = m.ReadAmp()
	s.Flushes, s.Compactions = m.Flush.Count, m.Compact.Count
	total := m.Total()
	s.FlushedBytes, s.CompactedBytes = int64(total.TableBytesFlushed), int64(total.TableBytesCompacted)
	s.CompactionsInProgress, s.CompactionDebt = m.Compact.NumInProgress, int64(m.Compact.EstimatedDebt)
	s.MemTables, s.MemTableBytes = m.MemTable.Count, int64(m.MemTable.Size)
	s.Pebble = m.String()
	return s
}
