package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// openCached opens a Pebble backend with a cache of cacheBytes and returns
// it with its store.
func openCached(t *testing.T, clock *fakeClock, cacheBytes int64, states ...Descriptor) (*Keyed, *pebbleStore) {
	t.Helper()
	k, err := Open(Config{Backend: BackendPebble, Dir: filepath.Join(t.TempDir(), "db"), MaxParallelism: 128,
		Range: Range{0, 127}, States: states, Clock: clock, SweepInterval: -1, CacheBytes: cacheBytes})
	must(t, err)
	t.Cleanup(func() { must(t, k.Close()) })
	return k, k.st.(*pebbleStore)
}

// pointKey is the database key of state id of key (no namespace).
func pointKey(k *Keyed, id int, key string) []byte {
	fk := binary.BigEndian.AppendUint16(nil, uint16(KeyGroup([]byte(key), k.maxP)))
	return compositeKey(fk, uint16(id), []byte(key), nil)
}

// onDisk reads a point entry from Pebble itself, past the cache:
// "<absent>" when Pebble does not have it.
func onDisk(t *testing.T, k *Keyed, p *pebbleStore, id int, key string) string {
	t.Helper()
	v, closer, err := p.db.Get(pointKey(k, id, key))
	if errors.Is(err, pebble.ErrNotFound) {
		return "<absent>"
	}
	must(t, err)
	defer closer.Close()
	return string(v)
}

// cached reports whether key's entry of state id is in the cache.
func cached(k *Keyed, p *pebbleStore, id int, key string) bool {
	fk := pointKey(k, id, key)
	return p.cache.find(p.cache.hash(fk), fk) >= 0
}

// checkAccounting recomputes the cache's bytes from its slots and checks
// them against its count and its limit.
func checkAccounting(t *testing.T, c *entryCache) {
	t.Helper()
	var sum int64
	live := 0
	for _, s := range c.slots {
		sum += int64(cap(s.buf))
		if s.flags&slotLive != 0 {
			sum += slotOverhead
			live++
		}
	}
	if sum != c.bytes {
		t.Fatalf("cache counts %d bytes, its slots hold %d", c.bytes, sum)
	}
	if c.bytes > c.limit {
		t.Fatalf("cache holds %d bytes, over its limit of %d", c.bytes, c.limit)
	}
	if live != len(c.slots)-len(c.free) {
		t.Fatalf("%d live slots, %d slots and %d free", live, len(c.slots), len(c.free))
	}
}

// A cache smaller than the state evicts within its bytes, writes what it
// evicts, and reads evicted entries back from Pebble.
func TestCacheEvictsWithinItsBytes(t *testing.T) {
	k, p := openCached(t, newClock(0), 64<<10, value("v", TTL{}))
	const n = 5000
	val := func(i int) string { return fmt.Sprintf("value-%d-%s", i, strings.Repeat("x", i%40)) }
	for i := range n {
		setKey(t, k, keyName(i))
		must(t, k.SetValue(0, []byte(val(i))))
		if p.cache.over() {
			t.Fatalf("after %d writes the cache holds %d bytes of %d", i+1, p.cache.bytes, p.cache.limit)
		}
	}
	checkAccounting(t, p.cache)
	if live := len(p.cache.index); live == 0 || live >= n/4 {
		t.Fatalf("%d of %d entries cached in 64 KiB", live, n)
	}
	for i := range n {
		setKey(t, k, keyName(i))
		want(t, getValue(t, k, 0), val(i))
	}
	checkAccounting(t, p.cache)
	if got := stored(t, k); got != n {
		t.Fatalf("%d entries stored, want %d", got, n)
	}
	for i := range n {
		setKey(t, k, keyName(i))
		must(t, k.Clear(0))
	}
	want(t, getValue(t, k, 0), "<absent>")
	if got := stored(t, k); got != 0 {
		t.Fatalf("%d entries stored after clearing every key", got)
	}
	checkAccounting(t, p.cache)
}

// Writes stay in the cache until a snapshot, which writes them first; the
// snapshot keeps its view while later writes, dirty in the cache, go on.
func TestCacheWritesBackAtSnapshots(t *testing.T) {
	clock := newClock(0)
	k, p := openCached(t, clock, 0, value("v", TTL{}), list("l", TTL{}))
	keys := []string{"a", "b", "c", "d"}
	for _, key := range keys {
		setKey(t, k, key)
		must(t, k.SetValue(0, []byte("one-"+key)))
		must(t, k.Append(1, []byte("x")))
	}
	for _, key := range keys {
		if got := onDisk(t, k, p, 0, key); got != "<absent>" {
			t.Fatalf("key %s reached Pebble before a snapshot: %q", key, got)
		}
		if !cached(k, p, 0, key) {
			t.Fatalf("key %s not cached", key)
		}
	}
	first, _ := snapshotBytes(t, k)
	for _, key := range keys {
		want(t, onDisk(t, k, p, 0, key), "one-"+key)
		setKey(t, k, key)
		must(t, k.SetValue(0, []byte("two-"+key)))
		must(t, k.Append(1, []byte("y")))
	}
	setKey(t, k, "a")
	must(t, k.Clear(0))
	must(t, k.Clear(1))
	want(t, onDisk(t, k, p, 0, "a"), "one-a")
	want(t, onDisk(t, k, p, 0, "b"), "one-b")
	second, _ := snapshotBytes(t, k)
	want(t, onDisk(t, k, p, 0, "a"), "<absent>")
	want(t, onDisk(t, k, p, 0, "b"), "two-b")
	for _, tc := range []struct {
		snap []byte
		want []string
	}{
		{first, []string{"a l=[x]", "a v=one-a", "b l=[x]", "b v=one-b", "c l=[x]", "c v=one-c", "d l=[x]", "d v=one-d"}},
		{second, []string{"b l=[x y]", "b v=two-b", "c l=[x y]", "c v=two-c", "d l=[x y]", "d v=two-d"}},
	} {
		fx := &fixture{t: t, backend: BackendMemory, clock: clock}
		m := fx.open(value("v", TTL{}), list("l", TTL{}))
		restore(t, m, tc.snap)
		wantList(t, dump(t, m, keys), tc.want...)
	}
}

// Entries of TTL states expire in the cache as in Pebble; a sweep sees the
// cache's entries, and a restamp on read survives the entry's eviction.
func TestCacheTTL(t *testing.T) {
	t.Run("expired cached value is removed", func(t *testing.T) {
		clock := newClock(0)
		k, p := openCached(t, clock, 0, value("v", ttl(10*time.Millisecond)))
		setKey(t, k, "a")
		must(t, k.SetValue(0, []byte("x")))
		clock.advance(10)
		want(t, getValue(t, k, 0), "<absent>")
		if !cached(k, p, 0, "a") {
			t.Fatal("the removal is not cached")
		}
		if got := stored(t, k); got != 0 {
			t.Fatalf("%d entries stored", got)
		}
	})
	t.Run("sweep drops expired cached entries", func(t *testing.T) {
		clock := newClock(0)
		k, p := openCached(t, clock, 0, value("v", TTL{TTL: 10 * time.Millisecond, Visibility: ReturnExpiredIfNotCleanedUp}))
		for i := range 100 {
			setKey(t, k, keyName(i))
			must(t, k.SetValue(0, []byte("x")))
		}
		clock.advance(10)
		setKey(t, k, keyName(0))
		must(t, k.SetValue(0, []byte("fresh")))
		must(t, k.Sweep())
		if cached(k, p, 0, keyName(1)) {
			t.Fatal("a swept entry is still cached")
		}
		if got := stored(t, k); got != 1 {
			t.Fatalf("%d entries stored after the sweep, want 1", got)
		}
		setKey(t, k, keyName(1))
		want(t, getValue(t, k, 0), "<absent>")
		setKey(t, k, keyName(0))
		want(t, getValue(t, k, 0), "fresh")
	})
	t.Run("restamp on read outlives eviction", func(t *testing.T) {
		clock := newClock(0)
		k, p := openCached(t, clock, 4<<10, value("v", TTL{TTL: 10 * time.Millisecond, Update: OnReadAndWrite}))
		setKey(t, k, "a")
		must(t, k.SetValue(0, []byte("x")))
		clock.advance(9)
		want(t, getValue(t, k, 0), "x")
		for i := range 200 {
			setKey(t, k, keyName(i))
			must(t, k.SetValue(0, []byte("filler")))
		}
		if cached(k, p, 0, "a") {
			t.Fatal("the entry was not evicted")
		}
		clock.advance(9)
		setKey(t, k, "a")
		want(t, getValue(t, k, 0), "x")
	})
}

// Entries too big for the cache go to Pebble directly, and writing one over
// a cached entry (or a cached list growing too big) loses nothing.
func TestCacheBypassesLargeEntries(t *testing.T) {
	k, p := openCached(t, newClock(0), 4<<10, value("v", TTL{}), list("l", TTL{}))
	big := strings.Repeat("b", 1000)
	setKey(t, k, "a")
	must(t, k.SetValue(0, []byte("small")))
	must(t, k.SetValue(0, []byte(big)))
	if cached(k, p, 0, "a") {
		t.Fatal("a 1000-byte value is cached in a 4 KiB cache")
	}
	want(t, onDisk(t, k, p, 0, "a"), big)
	want(t, getValue(t, k, 0), big)
	must(t, k.SetValue(0, []byte("small again")))
	want(t, onDisk(t, k, p, 0, "a"), big)
	want(t, getValue(t, k, 0), "small again")
	must(t, k.Clear(0))
	must(t, k.SetValue(0, []byte(big)))
	must(t, k.Clear(0))
	want(t, getValue(t, k, 0), "<absent>")

	var elems []string
	for i := range 40 {
		e := fmt.Sprintf("element-%d", i)
		must(t, k.Append(1, []byte(e)))
		elems = append(elems, e)
		if i == 0 {
			wantList(t, getList(t, k, 1), e)
		}
	}
	if cached(k, p, 1, "a") {
		t.Fatal("a list of 40 elements is cached in a 4 KiB cache")
	}
	wantList(t, getList(t, k, 1), elems...)
	must(t, k.Clear(1))
	must(t, k.Append(1, []byte(big)))
	wantList(t, getList(t, k, 1), big)
}

// Slots of equal hashes are chained; each is found and removed alone.
func TestCacheCollidingHashes(t *testing.T) {
	c := newEntryCache(1 << 20)
	keys := []string{"k0", "k1", "k2", "k3"}
	for _, key := range keys {
		c.insert(42, []byte(key), []byte("v-"+key), true, false)
	}
	for _, removed := range []string{"k1", "k3", "k0", "k2"} {
		c.remove(c.find(42, []byte(removed)))
		keys = slicesDelete(keys, removed)
		for _, key := range keys {
			i := c.find(42, []byte(key))
			if i < 0 {
				t.Fatalf("%s lost after removing %s", key, removed)
			}
			if k, v, _ := c.entry(i); string(k) != key || string(v) != "v-"+key {
				t.Fatalf("found %q=%q for %s", k, v, key)
			}
		}
		if c.find(42, []byte(removed)) >= 0 {
			t.Fatalf("%s found after its removal", removed)
		}
	}
	checkAccounting(t, c)
	if len(c.index) != 0 || len(c.free) != 4 {
		t.Fatalf("empty cache: index %d, %d free slots", len(c.index), len(c.free))
	}
}

func slicesDelete(s []string, v string) []string {
	out := []string{}
	for _, e := range s {
		if e != v {
			out = append(out, e)
		}
	}
	return out
}

// Random work gives the same results on the memory backend and on Pebble
// with a cache that evicts all the time, snapshots and sweeps included.
func TestCacheMatchesMemory(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			clock := newClock(0)
			states := []Descriptor{value("v", TTL{}), list("l", TTL{}),
				value("t", TTL{TTL: 50 * time.Millisecond, Update: OnReadAndWrite}), list("lt", ttl(50*time.Millisecond))}
			mem := (&fixture{t: t, backend: BackendMemory, clock: clock, cleanup: -1}).open(states...)
			peb, p := openCached(t, clock, 2<<10, states...)
			rng := rand.New(rand.NewPCG(seed, 1))
			var keys []string
			for i := range 60 {
				keys = append(keys, keyName(i))
			}
			for step := range 5000 {
				key := keys[rng.IntN(len(keys))]
				id := rng.IntN(len(states))
				op := rng.IntN(10)
				val := []byte(strings.Repeat(string(rune('a'+step%26)), rng.IntN(30)))
				var got [2]string
				for j, k := range []*Keyed{mem, peb} {
					setKey(t, k, key)
					got[j] = randomOp(t, k, op, id, val)
				}
				if got[0] != got[1] {
					t.Fatalf("step %d, op %d on %s state %d: memory %q, pebble %q", step, op, key, id, got[0], got[1])
				}
				if rng.IntN(500) == 0 {
					a, _ := snapshotBytes(t, mem)
					b, _ := snapshotBytes(t, peb)
					ma := (&fixture{t: t, backend: BackendMemory, clock: clock}).open(states...)
					mb := (&fixture{t: t, backend: BackendMemory, clock: clock}).open(states...)
					restore(t, ma, a)
					restore(t, mb, b)
					if da, db := dump(t, ma, keys), dump(t, mb, keys); !reflect.DeepEqual(da, db) {
						t.Fatalf("step %d: snapshots differ:\nmemory %q\npebble %q", step, da, db)
					}
				}
				if rng.IntN(200) == 0 {
					must(t, mem.Sweep())
					must(t, peb.Sweep())
				}
				clock.advance(int64(rng.IntN(3)))
				checkAccounting(t, p.cache)
			}
		})
	}
}

// randomOp runs one operation on state id and describes its result.
func randomOp(t *testing.T, k *Keyed, op, id int, val []byte) string {
	t.Helper()
	kind := k.states[id].kind
	switch {
	case op < 2:
		must(t, k.Clear(id))
		return "cleared"
	case kind == KindValue && op < 6:
		must(t, k.SetValue(id, val))
		return "set"
	case kind == KindValue:
		return getValue(t, k, id)
	case op < 6:
		must(t, k.Append(id, val))
		return "appended"
	default:
		return fmt.Sprint(getList(t, k, id))
	}
}

// A snapshot of more dirty entries than one flush batch holds writes them
// all.
func TestCacheFlushesInBatches(t *testing.T) {
	k, p := openCached(t, newClock(0), 0, value("v", TTL{}))
	const n = 40_000
	val := strings.Repeat("v", 40)
	for i := range n {
		setKey(t, k, keyName(i))
		must(t, k.SetValue(0, []byte(val)))
	}
	if got := len(p.cache.dirty); got != n {
		t.Fatalf("%d dirty entries, want %d", got, n)
	}
	snap, info := snapshotBytes(t, k)
	if info.Entries != n || len(p.cache.dirty) != 0 {
		t.Fatalf("snapshot of %d entries, %d left dirty", info.Entries, len(p.cache.dirty))
	}
	for i := range n {
		if got := onDisk(t, k, p, 0, keyName(i)); got != val {
			t.Fatalf("key %s on disk: %q", keyName(i), got)
		}
	}
	m := (&fixture{t: t, backend: BackendMemory, clock: newClock(0)}).open(value("v", TTL{}))
	restore(t, m, snap)
	if got := stored(t, m); got != n {
		t.Fatalf("%d entries restored, want %d", got, n)
	}
}

// The background sweeper, flushing and dropping cached entries on its own
// goroutine, never removes a value the task rewrote after it expired.
func TestCacheSweeperKeepsRewrittenValues(t *testing.T) {
	clock := newClock(0)
	k, err := Open(Config{Backend: BackendPebble, Dir: filepath.Join(t.TempDir(), "db"), MaxParallelism: 128,
		Range: Range{0, 127}, States: []Descriptor{value("v", ttl(10*time.Millisecond))}, Clock: clock,
		SweepInterval: time.Millisecond, CacheBytes: 16 << 10})
	must(t, err)
	defer k.Close()
	const n = 2000
	for i := range n {
		setKey(t, k, keyName(i))
		must(t, k.SetValue(0, []byte("old")))
	}
	clock.advance(10)
	for round := range 3 {
		for i := range n / 2 {
			setKey(t, k, keyName(i))
			must(t, k.SetValue(0, []byte(fmt.Sprint("new-", round))))
		}
	}
	for deadline := time.Now().Add(time.Minute); stored(t, k) != n/2; {
		if time.Now().After(deadline) {
			t.Fatalf("%d entries stored a minute after %d expired, want %d", stored(t, k), n/2, n/2)
		}
		time.Sleep(time.Millisecond)
	}
	for i := range n {
		setKey(t, k, keyName(i))
		if i < n/2 {
			want(t, getValue(t, k, 0), "new-2")
		} else {
			want(t, getValue(t, k, 0), "<absent>")
		}
	}
}
