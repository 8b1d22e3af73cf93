package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// fill writes every kind of state for keys, in two namespaces.
func fill(t testing.TB, k *Keyed, keys []string, tag string) {
	t.Helper()
	for _, key := range keys {
		setKey(t, k, key)
		for _, ns := range []string{"", "w1"} {
			k.SetNamespace([]byte(ns))
			must(t, k.SetValue(0, []byte(tag+"v-"+key+ns)))
			must(t, k.Append(1, []byte(tag+"l1-"+key)))
			must(t, k.Append(1, []byte(tag+"l2-"+ns)))
			must(t, k.MapPut(2, []byte("b"+ns), []byte(tag+"mb-"+key)))
			must(t, k.MapPut(2, []byte("a"), []byte(tag+"ma-"+key)))
		}
	}
}

// dumpAll is dump over both namespaces fill uses.
func dumpAll(t testing.TB, k *Keyed, keys []string) []string {
	t.Helper()
	var lines []string
	for _, key := range keys {
		if !k.rng.Contains(KeyGroup([]byte(key), k.maxP)) {
			continue
		}
		for _, ns := range []string{"", "w1"} {
			setKey(t, k, key)
			k.SetNamespace([]byte(ns))
			lines = append(lines, fmt.Sprintf("%s/%s v=%s l=%v m=%v", key, ns, getValue(t, k, 0), getList(t, k, 1), getEntries(t, k, 2)))
		}
	}
	sort.Strings(lines)
	return lines
}

var kinds = []Descriptor{value("v", TTL{}), list("l", TTL{}), mapping("m", TTL{})}

func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = keyName(i)
	}
	return out
}

func TestSnapshotRoundTrip(t *testing.T) {
	for _, from := range backends {
		for _, to := range backends {
			t.Run(from+"-to-"+to, func(t *testing.T) {
				clock := newClock(1000)
				src := (&fixture{t: t, backend: from, clock: clock}).open(kinds...)
				ks := keys(200)
				fill(t, src, ks, "")
				timers := []Timer{{Domain: 0, Timestamp: 5, Key: []byte(ks[0])}, {Domain: 1, Timestamp: 7, Key: []byte(ks[1]), Namespace: []byte("w1")}}
				snap, info := snapshotBytes(t, src, timers...)
				if info.Entries != 200*2*(1+1+2) || info.Timers != 2 || len(info.Offsets) != 128 || info.Offsets[0] == 0 {
					t.Fatalf("info %+v", info)
				}
				dst := (&fixture{t: t, backend: to, clock: clock}).open(kinds...)
				got := restore(t, dst, snap)
				if !reflect.DeepEqual(dumpAll(t, dst, ks), dumpAll(t, src, ks)) {
					t.Fatal("restored state differs")
				}
				sortTimers(got)
				if !reflect.DeepEqual(got, []Timer{{0, 5, []byte(ks[0]), nil}, {1, 7, []byte(ks[1]), []byte("w1")}}) {
					t.Fatalf("timers %+v", got)
				}
				again, _ := snapshotBytes(t, dst, timers...)
				if !bytes.Equal(again, snap) && from == to {
					t.Fatal("a snapshot of the restored state differs from the original")
				}
			})
		}
	}
}

func sortTimers(ts []Timer) {
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].Timestamp != ts[j].Timestamp {
			return ts[i].Timestamp < ts[j].Timestamp
		}
		return string(ts[i].Key) < string(ts[j].Key)
	})
}

// Snapshots of parallelism 2 restore into parallelism 3 and back into 1:
// every key (and timer) lands in exactly the subtask owning its key group.
func TestSnapshotRescale(t *testing.T) {
	forEachBackend(t, func(t *testing.T, fx *fixture) {
		const maxP = 128
		ks := keys(500)
		var snaps [][]byte
		var want []string
		for i := 0; i < 2; i++ {
			r := RangeOf(maxP, 2, i)
			k := fx.openRange(maxP, r, nil, kinds...)
			var mine []string
			var timers []Timer
			for _, key := range ks {
				if r.Contains(KeyGroup([]byte(key), maxP)) {
					mine = append(mine, key)
					timers = append(timers, Timer{Timestamp: 1, Key: []byte(key)})
				}
			}
			fill(t, k, mine, "")
			want = append(want, dumpAll(t, k, mine)...)
			snap, _ := snapshotBytes(t, k, timers...)
			snaps = append(snaps, snap)
		}
		sort.Strings(want)
		for _, p := range []int{3, 1} {
			var got []string
			seen := map[string]int{}
			for i := 0; i < p; i++ {
				r := RangeOf(maxP, p, i)
				k := fx.openRange(maxP, r, nil, kinds...)
				timers := restore(t, k, snaps...)
				for _, tm := range timers {
					if !r.Contains(KeyGroup(tm.Key, maxP)) {
						t.Fatalf("subtask %d of %d got the timer of %q", i, p, tm.Key)
					}
					seen[string(tm.Key)]++
				}
				got = append(got, dumpAll(t, k, ks)...)
				if n := stored(t, k); n != len(timers)*2*(1+1+2) {
					t.Fatalf("parallelism %d subtask %d stores %d entries for %d keys", p, i, n, len(timers))
				}
			}
			sort.Strings(got)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("parallelism %d: restored state differs", p)
			}
			for _, key := range ks {
				if seen[key] != 1 {
					t.Fatalf("parallelism %d: key %q restored %d times", p, key, seen[key])
				}
			}
		}
	})
}

// A snapshot is the state at the time it was taken, whatever the task does
// while it is written.
func TestSnapshotIsConsistent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, fx *fixture) {
		k := fx.open(kinds...)
		ks := keys(1000)
		fill(t, k, ks, "before-")
		want := dumpAll(t, k, ks)
		s, err := k.Snapshot(context.Background(), nil)
		must(t, err)
		var buf bytes.Buffer
		var wg sync.WaitGroup
		var werr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, werr = s.WriteTo(context.Background(), &buf)
		}()
		fill(t, k, ks, "after-")
		for _, key := range ks[:300] {
			setKey(t, k, key)
			must(t, k.Clear(0))
			must(t, k.Clear(1))
			must(t, k.Clear(2))
		}
		fill(t, k, []string{"new-1", "new-2"}, "after-")
		wg.Wait()
		must(t, werr)
		s.Release()
		after := dumpAll(t, k, ks)
		k2 := fx.open(kinds...)
		restore(t, k2, buf.Bytes())
		if !reflect.DeepEqual(dumpAll(t, k2, ks), want) {
			t.Fatal("the snapshot saw writes made after it was taken")
		}
		if !reflect.DeepEqual(dumpAll(t, k, ks), after) {
			t.Fatal("the live state changed after the snapshot was released")
		}
	})
}

// Several live snapshots each keep their own view, released in any order.
func TestMemorySnapshotsOverlap(t *testing.T) {
	fx := &fixture{t: t, backend: BackendMemory, clock: newClock(0)}
	k := fx.open(kinds...)
	ks := keys(300)
	var snaps []*Snapshot
	var wants [][]string
	for round := 0; round < 3; round++ {
		fill(t, k, ks[round*50:], fmt.Sprintf("r%d-", round))
		wants = append(wants, dumpAll(t, k, ks))
		s, err := k.Snapshot(context.Background(), nil)
		must(t, err)
		snaps = append(snaps, s)
	}
	fill(t, k, ks, "last-")
	for _, i := range []int{1, 0, 2} {
		var buf bytes.Buffer
		_, err := snaps[i].WriteTo(context.Background(), &buf)
		must(t, err)
		snaps[i].Release()
		k2 := fx.open(kinds...)
		restore(t, k2, buf.Bytes())
		if !reflect.DeepEqual(dumpAll(t, k2, ks), wants[i]) {
			t.Fatalf("snapshot %d differs", i)
		}
		fill(t, k, ks[:10], fmt.Sprintf("between-%d-", i))
	}
	if _, err := snaps[0].WriteTo(context.Background(), io.Discard); err == nil {
		t.Fatal("a snapshot was written twice")
	}
}

func TestRestoreChangesTTL(t *testing.T) {
	forEachBackend(t, func(t *testing.T, fx *fixture) {
		plain := fx.open(kinds...)
		fill(t, plain, []string{"a"}, "")
		snap, _ := snapshotBytes(t, plain)
		withTTL := []Descriptor{value("v", ttl(10*time.Millisecond)), list("l", ttl(10*time.Millisecond)), mapping("m", ttl(10*time.Millisecond))}
		k := fx.open(withTTL...)
		restore(t, k, snap)
		if !reflect.DeepEqual(dumpAll(t, k, []string{"a"}), dumpAll(t, plain, []string{"a"})) {
			t.Fatal("state differs after turning TTL on")
		}
		stamped, _ := snapshotBytes(t, k)
		fx.clock.advance(10)
		wantList(t, dumpAll(t, k, []string{"a"}), "a/ v=<absent> l=[] m=[]", "a/w1 v=<absent> l=[] m=[]")
		k2 := fx.open(kinds...)
		restore(t, k2, stamped)
		if !reflect.DeepEqual(dumpAll(t, k2, []string{"a"}), dumpAll(t, plain, []string{"a"})) {
			t.Fatal("state differs after turning TTL off")
		}
	})
}

func TestRestoreMatchesStatesByName(t *testing.T) {
	forEachBackend(t, func(t *testing.T, fx *fixture) {
		old := fx.open(value("gone", TTL{}), value("kept", TTL{}))
		setKey(t, old, "a")
		must(t, old.SetValue(0, []byte("x")))
		must(t, old.SetValue(1, []byte("y")))
		snap, _ := snapshotBytes(t, old)
		k := fx.open(mapping("new", TTL{}), value("kept", TTL{}))
		restore(t, k, snap)
		setKey(t, k, "a")
		want(t, getValue(t, k, 1), "y")
		wantList(t, getEntries(t, k, 0))
		wrong := fx.open(list("kept", TTL{}))
		_, err := wrong.Restore(context.Background(), []io.Reader{bytes.NewReader(snap)})
		if err == nil || !strings.Contains(err.Error(), `state "kept": the snapshot has a value state, the job declares a list state`) {
			t.Fatalf("kind change: %v", err)
		}
		other := fx.openRange(64, Range{0, 63}, nil, value("kept", TTL{}))
		_, err = other.Restore(context.Background(), []io.Reader{bytes.NewReader(snap)})
		if err == nil || !strings.Contains(err.Error(), "max parallelism 128 cannot restore into 64 key groups") {
			t.Fatalf("max parallelism: %v", err)
		}
	})
}

func TestRestoreRejectsDamage(t *testing.T) {
	fx := &fixture{t: t, backend: BackendMemory, clock: newClock(0)}
	src := fx.open(kinds...)
	fill(t, src, keys(20), "")
	snap, info := snapshotBytes(t, src, Timer{Key: []byte(keyName(0))})
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"not a snapshot", []byte("hello world, this is not a snapshot at all")},
		{"truncated", snap[:len(snap)/2]},
		{"no trailer", snap[:len(snap)-4]},
		{"bad version", append(append([]byte("WSKS"), 9), snap[5:]...)},
		{"bad key group", func() []byte {
			b := bytes.Clone(snap)
			b[info.Offsets[3]] ^= 1
			return b
		}()},
		{"huge length", func() []byte {
			b := bytes.Clone(snap[:info.Offsets[0]+4])
			return append(b, 0xff, 0xff, 0xff, 0x7f)
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := fx.open(kinds...)
			_, err := k.Restore(context.Background(), []io.Reader{bytes.NewReader(tc.data)})
			if !errors.Is(err, ErrSnapshot) {
				t.Fatalf("got %v, want ErrSnapshot", err)
			}
		})
	}
}
