package state

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a TTL clock the tests move by hand.
type fakeClock struct{ ms atomic.Int64 }

func (c *fakeClock) Now() int64           { return c.ms.Load() }
func (c *fakeClock) set(ms int64)         { c.ms.Store(ms) }
func (c *fakeClock) advance(ms int64)     { c.ms.Add(ms) }
func newClock(ms int64) *fakeClock        { c := &fakeClock{}; c.set(ms); return c }
func ttl(d time.Duration) TTL             { return TTL{TTL: d} }
func value(name string, t TTL) Descriptor { return Descriptor{Name: name, Kind: KindValue, TTL: t} }
func list(name string, t TTL) Descriptor  { return Descriptor{Name: name, Kind: KindList, TTL: t} }
func mapping(name string, t TTL) Descriptor {
	return Descriptor{Name: name, Kind: KindMap, TTL: t}
}

var backends = []string{BackendMemory, BackendPebble}

// variants are the backends forEachBackend runs, the Pebble backend with
// its cache as configured by default, so small that it evicts all the time
// (and entries of more than 256 bytes bypass it), and turned off.
var variants = []struct {
	name, backend string
	cacheBytes    int64
}{
	{BackendMemory, BackendMemory, 0},
	{BackendPebble, BackendPebble, 0},
	{"pebble-evicting", BackendPebble, 4 << 10},
	{"pebble-uncached", BackendPebble, -1},
}

// fixture opens Keyeds of one backend with one fake clock.
type fixture struct {
	t       testing.TB
	backend string
	clock   *fakeClock
	opened  int
	// cleanup is Config.CleanupSize: -1 keeps incremental cleanup from
	// removing what a test reads.
	cleanup int
	// cacheBytes is Config.CacheBytes.
	cacheBytes int64
}

// forEachBackend runs f as a subtest per backend variant.
func forEachBackend(t *testing.T, f func(t *testing.T, fx *fixture)) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			f(t, &fixture{t: t, backend: v.backend, clock: newClock(1_000), cacheBytes: v.cacheBytes})
		})
	}
}

// open makes a Keyed owning every key group of maxP.
func (fx *fixture) open(states ...Descriptor) *Keyed {
	return fx.openRange(128, Range{0, 127}, nil, states...)
}

func (fx *fixture) openRange(maxP int, r Range, budget *Budget, states ...Descriptor) *Keyed {
	fx.t.Helper()
	fx.opened++
	k, err := Open(Config{
		Backend: fx.backend, Dir: filepath.Join(fx.t.TempDir(), fmt.Sprintf("db%d", fx.opened)),
		MaxParallelism: maxP, Range: r, States: states, Clock: fx.clock, Budget: budget, SweepInterval: -1, CleanupSize: fx.cleanup,
		CacheBytes: fx.cacheBytes,
	})
	if err != nil {
		fx.t.Fatal(err)
	}
	fx.t.Cleanup(func() {
		if err := k.Close(); err != nil {
			fx.t.Error(err)
		}
	})
	return k
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func setKey(t testing.TB, k *Keyed, key string) {
	t.Helper()
	must(t, k.SetKey([]byte(key)))
}

// getValue reads a value state as a string, "<absent>" when absent.
func getValue(t testing.TB, k *Keyed, id int) string {
	t.Helper()
	v, ok, err := k.Value(id)
	must(t, err)
	if !ok {
		return "<absent>"
	}
	return string(v)
}

// decodeLenList decodes (u32 length | bytes)* into strings.
func decodeLenList(t testing.TB, count int, b []byte) []string {
	t.Helper()
	out := []string{}
	for len(b) > 0 {
		if len(b) < 4 {
			t.Fatalf("malformed list %x", b)
		}
		n := binary.LittleEndian.Uint32(b)
		out = append(out, string(b[4:4+n]))
		b = b[4+n:]
	}
	if len(out) != count {
		t.Fatalf("count %d, decoded %d elements", count, len(out))
	}
	return out
}

func getList(t testing.TB, k *Keyed, id int) []string {
	t.Helper()
	n, b, err := k.List(id)
	must(t, err)
	return decodeLenList(t, n, b)
}

// getEntries reads a map state as "k=v" strings in order.
func getEntries(t testing.TB, k *Keyed, id int) []string {
	t.Helper()
	n, b, err := k.MapEntries(id)
	must(t, err)
	parts := decodeLenList(t, 2*n, b)
	out := []string{}
	for i := 0; i < len(parts); i += 2 {
		out = append(out, parts[i]+"="+parts[i+1])
	}
	return out
}

func getMap(t testing.TB, k *Keyed, id int, uk string) string {
	t.Helper()
	v, ok, err := k.MapGet(id, []byte(uk))
	must(t, err)
	if !ok {
		return "<absent>"
	}
	return string(v)
}

// stored counts the entries a backend holds, expired or not.
func stored(t testing.TB, k *Keyed) int {
	t.Helper()
	ss, err := k.st.snapshot()
	must(t, err)
	defer ss.release()
	n := 0
	for kg := k.rng.First; kg <= k.rng.Last; kg++ {
		must(t, ss.each(kg, func(_, _, _ []byte, _ bool) error { n++; return nil }))
	}
	return n
}

// snapshotBytes writes a snapshot of k (with timers) and returns it.
func snapshotBytes(t testing.TB, k *Keyed, timers ...Timer) ([]byte, SnapshotInfo) {
	t.Helper()
	s, err := k.Snapshot(context.Background(), timers)
	must(t, err)
	defer s.Release()
	var buf bytes.Buffer
	info, err := s.WriteTo(context.Background(), &buf)
	must(t, err)
	if info.Size != int64(buf.Len()) {
		t.Fatalf("reported size %d, wrote %d", info.Size, buf.Len())
	}
	return buf.Bytes(), info
}

func restore(t testing.TB, k *Keyed, snaps ...[]byte) []Timer {
	t.Helper()
	var rs []io.Reader
	for _, s := range snaps {
		rs = append(rs, bytes.NewReader(s))
	}
	timers, err := k.Restore(context.Background(), rs)
	must(t, err)
	return timers
}

// dump lists every key's value states, lists and maps of k as sorted lines,
// reading through the API for each of keys.
func dump(t testing.TB, k *Keyed, keys []string) []string {
	t.Helper()
	var lines []string
	for _, key := range keys {
		if !k.rng.Contains(KeyGroup([]byte(key), k.maxP)) {
			continue
		}
		setKey(t, k, key)
		for id, st := range k.states {
			switch st.kind {
			case KindValue:
				if v := getValue(t, k, id); v != "<absent>" {
					lines = append(lines, fmt.Sprintf("%s %s=%s", key, st.name, v))
				}
			case KindList:
				if l := getList(t, k, id); len(l) > 0 {
					lines = append(lines, fmt.Sprintf("%s %s=%v", key, st.name, l))
				}
			case KindMap:
				if e := getEntries(t, k, id); len(e) > 0 {
					lines = append(lines, fmt.Sprintf("%s %s=%v", key, st.name, e))
				}
			}
		}
	}
	sort.Strings(lines)
	return lines
}
