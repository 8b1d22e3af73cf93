package state

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func TestPebbleConfigDefaults(t *testing.T) {
	want := PebbleConfig{
		BlockCacheBytes: 64 << 20, MemTableBytes: 32 << 20, MemTables: 2,
		L0CompactionThreshold: 4, L0StopWritesThreshold: 12, LBaseMaxBytes: 256 << 20,
		TargetFileBytes: 2 << 20, BlockBytes: 4 << 10, BloomBitsPerKey: 10, CompactionConcurrency: 1,
	}
	if got := (PebbleConfig{}).withDefaults(); got != want {
		t.Fatalf("defaults %+v, want %+v", got, want)
	}
	set := PebbleConfig{
		BlockCacheBytes: -1, MemTableBytes: 1 << 20, MemTables: 3,
		L0CompactionThreshold: 2, L0StopWritesThreshold: 8, LBaseMaxBytes: 8 << 20,
		TargetFileBytes: 1 << 20, BlockBytes: 1 << 10, BloomBitsPerKey: -1, CompactionConcurrency: 2,
	}
	if got := set.withDefaults(); got != set {
		t.Fatalf("set fields changed: %+v, want %+v", got, set)
	}
}

func TestPebbleOptions(t *testing.T) {
	log := pebbleLogger{log: slog.Default()}
	o := PebbleConfig{}.withDefaults().options(log)
	if !o.DisableWAL || o.CacheSize != 64<<20+2*32<<20 || o.MemTableSize != 32<<20 || o.MemTableStopWritesThreshold != 2 ||
		o.L0CompactionThreshold != 4 || o.L0StopWritesThreshold != 12 || o.LBaseMaxBytes != 256<<20 || o.TargetFileSizes[0] != 2<<20 {
		t.Fatalf("options: WAL off %v, cache %d, memtable %d x %d, L0 %d/%d, Lbase %d, L0 files %d", o.DisableWAL, o.CacheSize,
			o.MemTableStopWritesThreshold, o.MemTableSize, o.L0CompactionThreshold, o.L0StopWritesThreshold, o.LBaseMaxBytes, o.TargetFileSizes[0])
	}
	if lo, hi := o.CompactionConcurrencyRange(); lo != 1 || hi != 1 {
		t.Fatalf("compaction concurrency %d..%d, want 1..1", lo, hi)
	}
	if _, ok := o.FS.(noSyncFS); !ok {
		t.Fatalf("file system %T, want noSyncFS", o.FS)
	}
	for i, l := range o.Levels {
		want := "rocksdb.BuiltinBloomFilter"
		if i == len(o.Levels)-1 {
			want = ""
		}
		got := ""
		if l.FilterPolicy != nil {
			got = l.FilterPolicy.Name()
		}
		if got != want || l.BlockSize != 4<<10 {
			t.Fatalf("level %d: filter %q, block %d bytes; want %q, 4096", i, got, l.BlockSize, want)
		}
	}
	o = PebbleConfig{BlockCacheBytes: -1, BloomBitsPerKey: -1}.withDefaults().options(log)
	if o.CacheSize != 2*32<<20 {
		t.Fatalf("cache %d without room for blocks, want the memtables' %d", o.CacheSize, 2*32<<20)
	}
	for i, l := range o.Levels {
		if l.FilterPolicy != nil {
			t.Fatalf("level %d: filter %q without Bloom filters", i, l.FilterPolicy.Name())
		}
	}
}

// The backend's files are written as usual; only their syncs do nothing.
func TestNoSyncFSWritesWithoutSyncs(t *testing.T) {
	fs := noSyncFS{vfs.Default}
	dir := t.TempDir()
	name := filepath.Join(dir, "table")
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	must(t, err)
	if _, ok := f.(noSyncFile); !ok {
		t.Fatalf("created %T, want noSyncFile", f)
	}
	_, err = f.Write([]byte("entries"))
	must(t, err)
	must(t, f.Sync())
	must(t, f.SyncData())
	if full, err := f.SyncTo(7); full || err != nil {
		t.Fatalf("SyncTo: %v, %v", full, err)
	}
	must(t, f.Close())
	if b, err := os.ReadFile(name); err != nil || string(b) != "entries" {
		t.Fatalf("read back %q, %v", b, err)
	}
	f, err = fs.OpenReadWrite(name, vfs.WriteCategoryUnspecified)
	must(t, err)
	_, err = f.WriteAt([]byte("E"), 0)
	must(t, err)
	must(t, f.Sync())
	must(t, f.Close())
	f, err = fs.ReuseForWrite(name, filepath.Join(dir, "reused"), vfs.WriteCategoryUnspecified)
	must(t, err)
	must(t, f.Sync())
	must(t, f.Close())
	if b, err := os.ReadFile(filepath.Join(dir, "reused")); err != nil || string(b) != "Entries" {
		t.Fatalf("reused %q, %v", b, err)
	}
	d, err := fs.OpenDir(dir)
	must(t, err)
	must(t, d.Sync())
	must(t, d.Close())
	if fs.Unwrap() != vfs.Default {
		t.Fatal("Unwrap is not the operating system's file system")
	}
}
