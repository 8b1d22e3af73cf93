package state

import (
	"reflect"
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
