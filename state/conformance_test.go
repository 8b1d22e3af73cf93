package state

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// conformance is the suite every backend passes: each case runs against a
// fresh Keyed of every backend.
var conformance = []struct {
	name string
	run  func(t *testing.T, fx *fixture)
}{
	{"value set get overwrite clear", func(t *testing.T, fx *fixture) {
		k := fx.open(value("v", TTL{}))
		setKey(t, k, "a")
		want(t, getValue(t, k, 0), "<absent>")
		must(t, k.SetValue(0, []byte("one")))
		want(t, getValue(t, k, 0), "one")
		must(t, k.SetValue(0, []byte("a longer second value")))
		want(t, getValue(t, k, 0), "a longer second value")
		must(t, k.SetValue(0, []byte("3")))
		want(t, getValue(t, k, 0), "3")
		must(t, k.SetValue(0, nil))
		v, ok, err := k.Value(0)
		must(t, err)
		if !ok || len(v) != 0 {
			t.Fatalf("empty value: %q, %v", v, ok)
		}
		must(t, k.Clear(0))
		want(t, getValue(t, k, 0), "<absent>")
		must(t, k.Clear(0))
	}},
	{"keys and namespaces are separate", func(t *testing.T, fx *fixture) {
		k := fx.open(value("v", TTL{}), value("w", TTL{}))
		for _, key := range []string{"a", "b", "", "ab"} {
			setKey(t, k, key)
			must(t, k.SetValue(0, []byte("v-"+key)))
			must(t, k.SetValue(1, []byte("w-"+key)))
			k.SetNamespace([]byte("win"))
			must(t, k.SetValue(0, []byte("win-"+key)))
		}
		for _, key := range []string{"a", "b", "", "ab"} {
			setKey(t, k, key)
			want(t, getValue(t, k, 0), "v-"+key)
			want(t, getValue(t, k, 1), "w-"+key)
			k.SetNamespace([]byte("win"))
			want(t, getValue(t, k, 0), "win-"+key)
			want(t, getValue(t, k, 1), "<absent>")
			k.SetNamespace(nil)
			want(t, getValue(t, k, 0), "v-"+key)
		}
	}},
	{"list append get clear", func(t *testing.T, fx *fixture) {
		k := fx.open(list("l", TTL{}))
		setKey(t, k, "a")
		wantList(t, getList(t, k, 0))
		for _, e := range []string{"x", "", "a much longer element", "z"} {
			must(t, k.Append(0, []byte(e)))
		}
		wantList(t, getList(t, k, 0), "x", "", "a much longer element", "z")
		setKey(t, k, "b")
		wantList(t, getList(t, k, 0))
		setKey(t, k, "a")
		must(t, k.Clear(0))
		wantList(t, getList(t, k, 0))
		must(t, k.Append(0, []byte("again")))
		wantList(t, getList(t, k, 0), "again")
	}},
	{"map put get remove entries clear", func(t *testing.T, fx *fixture) {
		k := fx.open(mapping("m", TTL{}))
		setKey(t, k, "a")
		wantList(t, getEntries(t, k, 0))
		for _, kv := range [][2]string{{"b", "2"}, {"a", "1"}, {"", "empty"}, {"c", "3"}, {"a", "one"}} {
			must(t, k.MapPut(0, []byte(kv[0]), []byte(kv[1])))
		}
		want(t, getMap(t, k, 0, "a"), "one")
		want(t, getMap(t, k, 0, ""), "empty")
		want(t, getMap(t, k, 0, "d"), "<absent>")
		wantList(t, getEntries(t, k, 0), "=empty", "a=one", "b=2", "c=3")
		must(t, k.MapRemove(0, []byte("b")))
		must(t, k.MapRemove(0, []byte("nothing")))
		wantList(t, getEntries(t, k, 0), "=empty", "a=one", "c=3")
		k.SetNamespace([]byte("n"))
		wantList(t, getEntries(t, k, 0))
		k.SetNamespace(nil)
		must(t, k.Clear(0))
		wantList(t, getEntries(t, k, 0))
		want(t, getMap(t, k, 0, "a"), "<absent>")
		must(t, k.MapPut(0, []byte("x"), []byte("1")))
		must(t, k.MapRemove(0, []byte("x")))
		wantList(t, getEntries(t, k, 0))
	}},
	{"maps of neighbouring keys do not mix", func(t *testing.T, fx *fixture) {
		k := fx.open(mapping("m", TTL{}))
		for _, key := range []string{"a", "a\x00", "ab", ""} {
			setKey(t, k, key)
			must(t, k.MapPut(0, []byte("k"), []byte(key)))
		}
		for _, key := range []string{"a", "a\x00", "ab", ""} {
			setKey(t, k, key)
			wantList(t, getEntries(t, k, 0), "k="+key)
		}
	}},
	{"misuse is an error", func(t *testing.T, fx *fixture) {
		k := fx.openRange(4, Range{0, 1}, nil, value("v", TTL{}), list("l", TTL{}), mapping("m", TTL{}))
		if _, _, err := k.Value(0); err == nil || !strings.Contains(err.Error(), "no current key") {
			t.Fatalf("no key: %v", err)
		}
		key := keyIn(4, Range{0, 1})
		setKey(t, k, key)
		if err := k.Append(0, []byte("x")); err == nil || err.Error() != `state "v": a value state, not a list state` {
			t.Fatalf("kind: %v", err)
		}
		if err := k.MapPut(1, nil, nil); err == nil || err.Error() != `state "l": a list state, not a map state` {
			t.Fatalf("kind: %v", err)
		}
		if _, _, err := k.Value(3); err == nil || err.Error() != "state: no state 3 (3 declared)" {
			t.Fatalf("id: %v", err)
		}
		if err := k.SetKey([]byte(keyIn(4, Range{2, 3}))); !errors.Is(err, ErrKeyGroup) {
			t.Fatalf("foreign key: %v", err)
		}
	}},
	{"value TTL on create and write", func(t *testing.T, fx *fixture) {
		k := fx.open(value("v", ttl(10*time.Millisecond)))
		setKey(t, k, "a")
		must(t, k.SetValue(0, []byte("x")))
		fx.clock.advance(9)
		want(t, getValue(t, k, 0), "x")
		fx.clock.advance(1)
		want(t, getValue(t, k, 0), "<absent>")
		must(t, k.SetValue(0, []byte("y")))
		fx.clock.advance(5)
		must(t, k.SetValue(0, []byte("z")))
		fx.clock.advance(9)
		want(t, getValue(t, k, 0), "z")
	}},
	{"value TTL on read and write", func(t *testing.T, fx *fixture) {
		k := fx.open(value("v", TTL{TTL: 10 * time.Millisecond, Update: OnReadAndWrite}))
		setKey(t, k, "a")
		must(t, k.SetValue(0, []byte("x")))
		for i := 0; i < 5; i++ {
			fx.clock.advance(9)
			want(t, getValue(t, k, 0), "x")
		}
		fx.clock.advance(10)
		want(t, getValue(t, k, 0), "<absent>")
	}},
	{"value TTL return expired if not cleaned up", func(t *testing.T, fx *fixture) {
		fx.cleanup = -1
		k := fx.open(value("v", TTL{TTL: 10 * time.Millisecond, Visibility: ReturnExpiredIfNotCleanedUp}))
		setKey(t, k, "a")
		must(t, k.SetValue(0, []byte("x")))
		fx.clock.advance(10)
		want(t, getValue(t, k, 0), "x")
		want(t, getValue(t, k, 0), "<absent>")
	}},
	{"list TTL per element", func(t *testing.T, fx *fixture) {
		k := fx.open(list("l", ttl(10*time.Millisecond)))
		setKey(t, k, "a")
		must(t, k.Append(0, []byte("old")))
		fx.clock.advance(5)
		must(t, k.Append(0, []byte("new")))
		fx.clock.advance(5)
		wantList(t, getList(t, k, 0), "new")
		fx.clock.advance(5)
		wantList(t, getList(t, k, 0))
		if n := stored(t, k); n != 0 {
			t.Fatalf("%d entries stored after every element expired", n)
		}
	}},
	{"list TTL on read and write, return expired", func(t *testing.T, fx *fixture) {
		fx.cleanup = -1
		k := fx.open(list("l", TTL{TTL: 10 * time.Millisecond, Update: OnReadAndWrite, Visibility: ReturnExpiredIfNotCleanedUp}))
		setKey(t, k, "a")
		must(t, k.Append(0, []byte("a")))
		fx.clock.advance(5)
		must(t, k.Append(0, []byte("b")))
		fx.clock.advance(5)
		wantList(t, getList(t, k, 0), "a", "b")
		wantList(t, getList(t, k, 0), "b")
		fx.clock.advance(9)
		wantList(t, getList(t, k, 0), "b")
	}},
	{"map TTL per entry", func(t *testing.T, fx *fixture) {
		k := fx.open(mapping("m", ttl(10*time.Millisecond)))
		setKey(t, k, "a")
		must(t, k.MapPut(0, []byte("old"), []byte("1")))
		fx.clock.advance(5)
		must(t, k.MapPut(0, []byte("new"), []byte("2")))
		fx.clock.advance(5)
		want(t, getMap(t, k, 0, "old"), "<absent>")
		wantList(t, getEntries(t, k, 0), "new=2")
		fx.clock.advance(5)
		wantList(t, getEntries(t, k, 0))
		if n := stored(t, k); n != 0 {
			t.Fatalf("%d entries stored after every entry expired", n)
		}
	}},
	{"map TTL on read and write, return expired", func(t *testing.T, fx *fixture) {
		fx.cleanup = -1
		k := fx.open(mapping("m", TTL{TTL: 10 * time.Millisecond, Update: OnReadAndWrite, Visibility: ReturnExpiredIfNotCleanedUp}))
		setKey(t, k, "a")
		must(t, k.MapPut(0, []byte("x"), []byte("1")))
		must(t, k.MapPut(0, []byte("y"), []byte("2")))
		fx.clock.advance(9)
		want(t, getMap(t, k, 0, "x"), "1")
		fx.clock.advance(9)
		wantList(t, getEntries(t, k, 0), "x=1", "y=2")
		wantList(t, getEntries(t, k, 0), "x=1")
		fx.clock.advance(10)
		want(t, getMap(t, k, 0, "x"), "1")
		want(t, getMap(t, k, 0, "x"), "<absent>")
	}},
	{"sweep drops expired entries", func(t *testing.T, fx *fixture) {
		k := fx.open(value("v", ttl(10*time.Millisecond)), list("l", ttl(10*time.Millisecond)),
			mapping("m", ttl(10*time.Millisecond)), value("forever", TTL{}))
		for i := 0; i < 300; i++ {
			setKey(t, k, keyName(i))
			must(t, k.SetValue(0, []byte("x")))
			must(t, k.Append(1, []byte("x")))
			must(t, k.MapPut(2, []byte("x"), []byte("y")))
			must(t, k.SetValue(3, []byte("kept")))
		}
		fx.clock.advance(5)
		setKey(t, k, keyName(0))
		must(t, k.Append(1, []byte("fresh")))
		must(t, k.MapPut(2, []byte("fresh"), []byte("y")))
		fx.clock.advance(5)
		must(t, k.Sweep())
		if n := stored(t, k); n != 300+2 {
			t.Fatalf("%d entries stored after the sweep, want 302", n)
		}
		wantList(t, getList(t, k, 1), "fresh")
		wantList(t, getEntries(t, k, 2), "fresh=y")
	}},
	{"snapshot leaves expired entries out", func(t *testing.T, fx *fixture) {
		k := fx.open(value("v", ttl(10*time.Millisecond)), list("l", ttl(10*time.Millisecond)), mapping("m", ttl(10*time.Millisecond)))
		setKey(t, k, "a")
		must(t, k.SetValue(0, []byte("old")))
		must(t, k.Append(1, []byte("old")))
		must(t, k.MapPut(2, []byte("old"), []byte("1")))
		fx.clock.advance(5)
		setKey(t, k, "b")
		must(t, k.SetValue(0, []byte("new")))
		must(t, k.Append(1, []byte("new")))
		setKey(t, k, "a")
		must(t, k.Append(1, []byte("new")))
		must(t, k.MapPut(2, []byte("new"), []byte("2")))
		fx.clock.advance(5)
		snap, info := snapshotBytes(t, k)
		if info.Entries != 4 {
			t.Fatalf("%d entries written, want 4", info.Entries)
		}
		fx2 := &fixture{t: t, backend: fx.backend, clock: fx.clock, cacheBytes: fx.cacheBytes}
		k2 := fx2.open(value("v", TTL{}), list("l", TTL{}), mapping("m", TTL{}))
		restore(t, k2, snap)
		wantList(t, dump(t, k2, []string{"a", "b"}), "a l=[new]", "a m=[new=2]", "b l=[new]", "b v=new")
	}},
}

func TestConformance(t *testing.T) {
	for _, tc := range conformance {
		t.Run(tc.name, func(t *testing.T) {
			forEachBackend(t, tc.run)
		})
	}
}

func want(t testing.TB, got, want string) {
	t.Helper()
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func wantList(t testing.TB, got []string, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func keyName(i int) string { return "key-" + string(rune('a'+i%26)) + "-" + itoa(i) }

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// keyIn finds a key whose key group is in r.
func keyIn(maxP int, r Range) string {
	for i := 0; ; i++ {
		if k := keyName(i); r.Contains(KeyGroup([]byte(k), maxP)) {
			return k
		}
	}
}
