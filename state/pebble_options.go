package state

import (
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// PebbleConfig tunes the Pebble backend of one subtask. A zero field takes
// its default below; docs/RATIONALE.md ("Pebble tuned for state larger than
// memory") says why each default is what it is.
//
// The backend's memory is bounded by Config.CacheBytes (the entry cache)
// plus BlockCacheBytes plus MemTables x MemTableBytes; Pebble's other
// memory (open table readers, iterators, a compaction's buffers) does not
// grow with the state.
type PebbleConfig struct {
	// BlockCacheBytes bounds Pebble's block cache: the data, index and
	// filter blocks of its tables; negative leaves it no room.
	BlockCacheBytes int64
	// MemTableBytes is the size of one memtable, and MemTables how many
	// may exist at once: the one taking writes and those waiting for their
	// flush (Pebble's MemTableStopWritesThreshold).
	MemTableBytes int64
	MemTables     int
	// L0CompactionThreshold is the L0 read amplification (sublevels) at
	// which a compaction out of L0 starts, L0StopWritesThreshold the one at
	// which writes wait for it.
	L0CompactionThreshold int
	L0StopWritesThreshold int
	// LBaseMaxBytes is the size of the first level below L0 (the next ones
	// are 10 times larger each): the larger it is, the fewer levels a read
	// looks in and a write is compacted through.
	LBaseMaxBytes int64
	// TargetFileBytes is the size of the tables L0 is written in; each
	// level below doubles it.
	TargetFileBytes int64
	// BlockBytes is the size of a data block.
	BlockBytes int
	// BloomBitsPerKey sizes the Bloom filter of every table; negative
	// writes none.
	BloomBitsPerKey int
	// CompactionConcurrency is how many compactions may run at once.
	CompactionConcurrency int
}

// Defaults of PebbleConfig.
const (
	DefaultBlockCacheBytes       = 64 << 20
	DefaultMemTableBytes         = 32 << 20
	DefaultMemTables             = 2
	DefaultL0CompactionThreshold = 4
	DefaultL0StopWritesThreshold = 12
	DefaultLBaseMaxBytes         = 256 << 20
	DefaultTargetFileBytes       = 2 << 20
	DefaultBlockBytes            = 4 << 10
	DefaultBloomBitsPerKey       = 10
	DefaultCompactionConcurrency = 1
)

// withDefaults fills the zero fields of c.
func (c PebbleConfig) withDefaults() PebbleConfig {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def64 := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	def64(&c.BlockCacheBytes, DefaultBlockCacheBytes)
	def64(&c.MemTableBytes, DefaultMemTableBytes)
	def(&c.MemTables, DefaultMemTables)
	def(&c.L0CompactionThreshold, DefaultL0CompactionThreshold)
	def(&c.L0StopWritesThreshold, DefaultL0StopWritesThreshold)
	def64(&c.LBaseMaxBytes, DefaultLBaseMaxBytes)
	def64(&c.TargetFileBytes, DefaultTargetFileBytes)
	def(&c.BlockBytes, DefaultBlockBytes)
	def(&c.BloomBitsPerKey, DefaultBloomBitsPerKey)
	def(&c.CompactionConcurrency, DefaultCompactionConcurrency)
	return c
}

// options are the Pebble options of c, whose fields are all set.
func (c PebbleConfig) options(log pebble.Logger) *pebble.Options {
	opts := &pebble.Options{
		DisableWAL: true,
		FS:         noSyncFS{vfs.Default},
		// Pebble reserves its memtables' bytes in the block cache: without
		// them, they would take the blocks' room.
		CacheSize:                   max(c.BlockCacheBytes, 0) + int64(c.MemTables)*c.MemTableBytes,
		MemTableSize:                uint64(c.MemTableBytes),
		MemTableStopWritesThreshold: c.MemTables,
		L0CompactionThreshold:       c.L0CompactionThreshold,
		L0StopWritesThreshold:       c.L0StopWritesThreshold,
		LBaseMaxBytes:               c.LBaseMaxBytes,
		Merger:                      pebble.DefaultMerger,
		Logger:                      log,
		FormatMajorVersion:          pebble.FormatNewest,
	}
	opts.TargetFileSizes[0] = c.TargetFileBytes
	concurrency := c.CompactionConcurrency
	opts.CompactionConcurrencyRange = func() (int, int) { return 1, concurrency }
	opts.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionNone })
	for i := range opts.Levels {
		opts.Levels[i].BlockSize = c.BlockBytes
		// Pebble's point reads never consult the filters of the last
		// level, L6, which holds most keys: a filter there would cost its
		// building in every compaction into L6 and its disk space only.
		if c.BloomBitsPerKey > 0 && i < len(opts.Levels)-1 {
			opts.Levels[i].FilterPolicy = bloom.FilterPolicy(c.BloomBitsPerKey)
		}
	}
	return opts
}
