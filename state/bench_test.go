package state

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkValueGetPut is a value state read and write of one key, through
// Keyed (without the ABI; host.BenchmarkStateGetPut measures through it),
// the keys visited in a stride over a key space of 1,024, 100,000 or
// 2,000,000 (more than the Pebble backend's cache holds), on every backend
// variant of the tests.
func BenchmarkValueGetPut(b *testing.B) {
	for _, v := range variants {
		if v.name == "pebble-evicting" {
			continue
		}
		for _, keys := range []int{1024, 100_000, 2_000_000} {
			b.Run(fmt.Sprintf("%s/keys=%d", v.name, keys), func(b *testing.B) {
				fx := &fixture{t: b, backend: v.backend, clock: newClock(0), cacheBytes: v.cacheBytes}
				k := fx.open(value("v", TTL{}))
				key := make([]byte, 8)
				val := make([]byte, 8)
				for i := range keys {
					binary.BigEndian.PutUint64(key, uint64(i))
					must(b, k.SetKey(key))
					must(b, k.SetValue(0, val))
				}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					binary.BigEndian.PutUint64(key, uint64(i%keys))
					i += 7919
					if err := k.SetKey(key); err != nil {
						b.Fatal(err)
					}
					v, _, err := k.Value(0)
					if err != nil {
						b.Fatal(err)
					}
					if err := k.SetValue(0, v); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(2*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
			})
		}
	}
}

// BenchmarkMemoryBytesPerKey fills the memory backend with small keys (an
// 8-byte key and an 8-byte value each) and reports the heap bytes each key
// takes and what the backend accounts for it. Run it alone, once:
//
//	go test -run '^$' -bench MemoryBytesPerKey -benchtime 1x ./state/
func BenchmarkMemoryBytesPerKey(b *testing.B) {
	for _, keys := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprint(keys), func(b *testing.B) {
			for b.Loop() {
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				k, err := Open(Config{MaxParallelism: 128, Range: Range{0, 127}, States: []Descriptor{value("v", TTL{})}})
				must(b, err)
				key := make([]byte, 8)
				for i := range keys {
					binary.BigEndian.PutUint64(key, uint64(i))
					must(b, k.SetKey(key))
					must(b, k.SetValue(0, key))
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(keys), "heap-bytes/key")
				b.ReportMetric(float64(k.Bytes())/float64(keys), "accounted-bytes/key")
				must(b, k.Close())
			}
		})
	}
}

// BenchmarkCacheBytesPerEntry fills the Pebble backend's cache with entries
// of a 20-byte key and an 8-byte value and reports the heap bytes each
// takes and what the cache counts for it. Run it alone, once:
//
//	go test -run '^$' -bench CacheBytesPerEntry -benchtime 1x ./state/
func BenchmarkCacheBytesPerEntry(b *testing.B) {
	for _, entries := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprint(entries), func(b *testing.B) {
			for b.Loop() {
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				c := newEntryCache(1 << 40)
				key := make([]byte, 20)
				for i := range entries {
					binary.BigEndian.PutUint64(key, uint64(i))
					c.insert(c.hash(key), key, key[:8], true, true)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(entries), "heap-bytes/entry")
				b.ReportMetric(float64(c.bytes)/float64(entries), "counted-bytes/entry")
				runtime.KeepAlive(c)
			}
		})
	}
}

// BenchmarkSnapshotDirtyCache is the Pebble backend's Snapshot when the
// cache holds 100,000 dirty values, which it writes to Pebble first.
func BenchmarkSnapshotDirtyCache(b *testing.B) {
	fx := &fixture{t: b, backend: BackendPebble, clock: newClock(0)}
	k := fx.open(value("v", TTL{}))
	const keys = 100_000
	key := make([]byte, 8)
	for b.Loop() {
		b.StopTimer()
		for i := range keys {
			binary.BigEndian.PutUint64(key, uint64(i))
			must(b, k.SetKey(key))
			must(b, k.SetValue(0, key))
		}
		b.StartTimer()
		s, err := k.Snapshot(context.Background(), nil)
		must(b, err)
		s.Release()
	}
	b.ReportMetric(float64(keys), "dirty-entries")
}
