package host

import (
	"context"
	"encoding/binary"
	"flag"
	"math/rand/v2"
	"testing"
	"time"

	"wasmstream.io/platform/state"
)

var bigState = flag.Bool("bigstate", false, "run BenchmarkStateBeyondCache: 10,000,000 keys, "+
	"several GB of memory and disk, several minutes")

// Keys of the state benchmarks with many keys: "key-" and 8 digits, and
// values of 100 bytes.
const (
	bigKeyLen   = 12
	bigValueLen = 100
)

// bigKey writes key i into key, of bigKeyLen bytes.
func bigKey(key []byte, i uint64) {
	copy(key, "key-")
	for j := bigKeyLen - 1; j >= 4; j-- {
		key[j] = byte('0' + i%10)
		i /= 10
	}
}

// randomEnv is a keyedEnv whose groups are keys drawn uniformly at random
// from keys.
type randomEnv struct {
	*keyedEnv
	keys uint64
	rng  *rand.Rand
	key  []byte
}

func newRandomEnv(k *state.Keyed, keys uint64) *randomEnv {
	return &randomEnv{keyedEnv: &keyedEnv{k: k}, keys: keys, rng: rand.New(rand.NewPCG(1, 2)), key: make([]byte, bigKeyLen)}
}

func (e *randomEnv) Enter(uint32) error {
	bigKey(e.key, e.rng.Uint64N(e.keys))
	return e.k.SetKey(e.key)
}

// loadKeys gives each of keys keys a value of bigValueLen bytes whose
// counter (its first 8 bytes, little-endian) is 0, through the Go API.
func loadKeys(tb testing.TB, k *state.Keyed, keys uint64) {
	tb.Helper()
	key, value := make([]byte, bigKeyLen), make([]byte, bigValueLen)
	for i := range keys {
		bigKey(key, i)
		binary.LittleEndian.PutUint64(value[8:], i)
		if err := k.SetKey(key); err != nil {
			tb.Fatal(err)
		}
		if err := k.SetValue(0, value); err != nil {
			tb.Fatal(err)
		}
	}
}

// The update function of testdata/update.wat adds 1 to each group's
// counter, and gives a key without a value one of 100 bytes; the rest of
// the value is kept. Run on the Pebble backend with a cache that evicts, so
// that values go to Pebble and come back.
func TestUpdateCountsEveryGroup(t *testing.T) {
	h, _ := newHost(t, "")
	p := newPool(t, compileFixture(t, h, "update"), InstanceConfig{})
	k, err := state.Open(state.Config{Backend: state.BackendPebble, Dir: t.TempDir() + "/db", MaxParallelism: 128,
		Range: state.Range{First: 0, Last: 127}, States: []state.Descriptor{{Name: "v", Kind: state.KindValue}},
		CacheBytes: 4 << 10, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	const keys = 300
	loadKeys(t, k, keys/2)
	env := &keyedEnv{k: k}
	for i := range keys {
		key := make([]byte, bigKeyLen)
		bigKey(key, uint64(i))
		env.keys = append(env.keys, key)
	}
	frame := binary.LittleEndian.AppendUint32(nil, keys)
	for range 3 {
		if _, err := p.CallWith(context.Background(), 0, frame, env); err != nil {
			t.Fatal(err)
		}
	}
	for i, key := range env.keys {
		if err := k.SetKey(key); err != nil {
			t.Fatal(err)
		}
		v, ok, err := k.Value(0)
		if err != nil || !ok || len(v) != bigValueLen {
			t.Fatalf("key %s: %d bytes, %v, %v", key, len(v), ok, err)
		}
		var rest uint64
		if i < keys/2 {
			rest = uint64(i)
		}
		if n, r := binary.LittleEndian.Uint64(v), binary.LittleEndian.Uint64(v[8:]); n != 3 || r != rest {
			t.Fatalf("key %s: counter %d and %d, want 3 and %d", key, n, r, rest)
		}
	}
	if s := k.Stats(); s.CacheHits+s.CacheMisses != 4*keys || s.CacheMisses == 0 {
		t.Fatalf("cache hits %d and misses %d, want %d lookups, some missed", s.CacheHits, s.CacheMisses, 4*keys)
	}
}

// pebbleBefore is the Pebble backend's tuning before it was tuned for state
// larger than memory (docs/PERFORMANCE.md, "State larger than memory"). Its
// block cache of 16 MiB had no room for blocks: Pebble reserved it all for
// the two memtables of 16 MiB.
var pebbleBefore = state.PebbleConfig{
	BlockCacheBytes: -1, MemTableBytes: 16 << 20, MemTables: 2,
	L0CompactionThreshold: 4, L0StopWritesThreshold: 12, LBaseMaxBytes: 64 << 20, TargetFileBytes: 2 << 20,
	BlockBytes: 4 << 10, BloomBitsPerKey: 10, CompactionConcurrency: 1,
}

// BenchmarkStateBeyondCache is keyed state larger than memory through the
// ABI: 10,000,000 keys with values of 100 bytes, loaded through the Go API,
// then read and written back by the update function of testdata/update.wat
// (a get and a put per group, 1024 groups a call), each group a key drawn
// uniformly at random from all of them. The Pebble backend's entry cache
// is a tenth of the keys' and values' bytes (112 MB), so that the working
// set is 10 times the cache; "pebble-before" is the backend's tuning before
// it was tuned for this, "memory" the memory backend. It reports state
// operations per second and per CPU second of the whole process (Pebble's
// flushes and compactions run on other goroutines), the caches' hit rates
// and what Pebble did meanwhile. Run it alone, with -bigstate:
//
//	go test ./host -run '^$' -bench StateBeyondCache -bigstate -benchtime 30s -timeout 60m
func BenchmarkStateBeyondCache(b *testing.B) {
	if !*bigState {
		b.Skip("10,000,000 keys: run with -bigstate")
	}
	const keys = 10_000_000
	cacheBytes := int64(keys * (bigKeyLen + bigValueLen) / 10)
	cases := []struct {
		name, backend string
		tune          state.PebbleConfig
	}{
		{"memory", state.BackendMemory, state.PebbleConfig{}},
		{"pebble-before", state.BackendPebble, pebbleBefore},
		{"pebble", state.BackendPebble, state.PebbleConfig{}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			h, _ := newHost(b, "")
			p := newPool(b, compileFixture(b, h, "update"), InstanceConfig{})
			k, err := state.Open(state.Config{Backend: c.backend, Dir: b.TempDir() + "/db", MaxParallelism: 128,
				Range: state.Range{First: 0, Last: 127}, States: []state.Descriptor{{Name: "v", Kind: state.KindValue}},
				CacheBytes: cacheBytes, Pebble: c.tune, SweepInterval: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer k.Close()
			start := time.Now()
			loadKeys(b, k, keys)
			b.Logf("loaded %d keys in %v", keys, time.Since(start).Round(time.Millisecond))
			if c.backend == state.BackendPebble {
				settle(b, k)
			}
			env := newRandomEnv(k, keys)
			const groups = 1024
			frame := binary.LittleEndian.AppendUint32(nil, groups)
			ctx := context.Background()
			if _, err := p.CallWith(ctx, 0, frame, env); err != nil {
				b.Fatal(err)
			}
			before := k.Stats()
			cpu0, measured := processCPU()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.CallWith(ctx, 0, frame, env); err != nil {
					b.Fatal(err)
				}
			}
			cpu1, ok := processCPU()
			after := k.Stats()
			ops := float64(2 * groups * b.N)
			b.ReportMetric(ops/b.Elapsed().Seconds(), "ops/s")
			if measured && ok {
				b.ReportMetric(float64(cpu1-cpu0)/ops, "cpu-ns/op")
			}
			if c.backend != state.BackendPebble {
				return
			}
			ratio := func(hits, misses int64) float64 { return 100 * float64(hits) / float64(max(hits+misses, 1)) }
			b.ReportMetric(ratio(after.CacheHits-before.CacheHits, after.CacheMisses-before.CacheMisses), "cache-hit-%")
			b.ReportMetric(ratio(after.BlockCacheHits-before.BlockCacheHits, after.BlockCacheMisses-before.BlockCacheMisses), "block-hit-%")
			b.ReportMetric(float64(after.BlockCacheMisses-before.BlockCacheMisses)/ops*2, "block-misses/get")
			b.ReportMetric(float64(after.ReadAmp), "read-amp")
			b.ReportMetric(float64(after.Flushes-before.Flushes), "flushes")
			b.ReportMetric(float64(after.Compactions-before.Compactions), "compactions")
			b.ReportMetric(float64(after.CompactedBytes-before.CompactedBytes)/ops*2, "compacted-B/put")
			b.Logf("cache %d bytes, block cache %d bytes, memtables %d of %d bytes\n%s",
				after.CacheBytes, after.BlockCacheBytes, after.MemTables, after.MemTableBytes, after.Pebble)
		})
	}
}

// settle waits, up to two minutes, until Pebble has run no compaction for a
// second, so that the measurement does not pay for the load's.
func settle(b *testing.B, k *state.Keyed) {
	start := time.Now()
	for quiet := 0; quiet < 4 && time.Since(start) < 2*time.Minute; {
		quiet++
		if s := k.Stats(); s.CompactionsInProgress > 0 {
			quiet = 0
		}
		time.Sleep(250 * time.Millisecond)
	}
	s := k.Stats()
	b.Logf("settled in %v: read amplification %d, %d compactions running, debt %d bytes\n%s",
		time.Since(start).Round(time.Millisecond), s.ReadAmp, s.CompactionsInProgress, s.CompactionDebt, s.Pebble)
}
