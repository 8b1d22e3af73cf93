package state

import (
	"reflect"
	"strings"
	"testing"
)

// A Keyed opened with OnlyKey restores that key's entries and timers, in
// every state kind, and nothing of the other keys of its key group.
func TestRestoreOnlyKey(t *testing.T) {
	forEachBackend(t, func(t *testing.T, fx *fixture) {
		src := fx.open(kinds...)
		all := keys(400)
		fill(t, src, all, "")
		var timers []Timer
		for _, k := range all {
			timers = append(timers, Timer{Timestamp: 7, Key: []byte(k)})
		}
		snap, _ := snapshotBytes(t, src, timers...)
		// key shares its key group with sibling.
		key, sibling := "", ""
		byGroup := map[int]string{}
		for _, k := range all {
			kg := KeyGroup([]byte(k), 128)
			if other, ok := byGroup[kg]; ok {
				key, sibling = k, other
				break
			}
			byGroup[kg] = k
		}
		kg := KeyGroup([]byte(key), 128)
		group := fx.openRange(128, Range{kg, kg}, nil, kinds...)
		if got := restore(t, group, snap); len(got) < 2 {
			t.Fatalf("the key group restores %d timers, want at least 2", len(got))
		}
		only := fx.openRange(128, Range{kg, kg}, nil, kinds...)
		only.onlyKey = []byte(key)
		got := restore(t, only, snap)
		if len(got) != 1 || string(got[0].Key) != key || got[0].Timestamp != 7 {
			t.Fatalf("timers %+v, want the one of %s", got, key)
		}
		if want := dump(t, src, []string{key}); !reflect.DeepEqual(dump(t, only, []string{key, sibling}), want) || len(want) == 0 {
			t.Fatalf("restored %q\nwant %q", dump(t, only, []string{key, sibling}), want)
		}
		if n, all := stored(t, only), stored(t, group); n == 0 || n >= all {
			t.Fatalf("%d entries of the key restored, %d of its key group", n, all)
		}
	})
}

// SnapshotRange reads a snapshot's key groups and refuses what is not a
// snapshot's header.
func TestSnapshotRange(t *testing.T) {
	fx := &fixture{t: t, backend: BackendMemory, clock: newClock(0)}
	snap, _ := snapshotBytes(t, fx.openRange(128, Range{32, 63}, nil, kinds...))
	maxP, r, err := SnapshotRange(snap)
	if err != nil || maxP != 128 || r != (Range{32, 63}) {
		t.Fatalf("got %d %v %v", maxP, r, err)
	}
	bad := func(mutate func([]byte) []byte) []byte { return mutate(append([]byte(nil), snap...)) }
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"short", snap[:10], "truncated header"},
		{"magic", bad(func(b []byte) []byte { b[0] = 'X'; return b }), "not a state snapshot"},
		{"version", bad(func(b []byte) []byte { b[4] = 9; return b }), "version 9"},
		{"range", bad(func(b []byte) []byte { b[9] = 70; return b }), "key groups [70, 63] of 128"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := SnapshotRange(tc.data); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// FuzzSnapshotRange: any bytes give a range inside the max parallelism or
// an error, never a panic.
func FuzzSnapshotRange(f *testing.F) {
	f.Add([]byte("WSKS\x01\x80\x00\x00\x00\x00\x00\x00\x00\x7f\x00\x00\x00"))
	f.Add([]byte("WSKS"))
	f.Fuzz(func(t *testing.T, data []byte) {
		maxP, r, err := SnapshotRange(data)
		if err == nil && (r.First < 0 || r.First > r.Last || r.Last >= maxP) {
			t.Fatalf("range %v of %d", r, maxP)
		}
	})
}
