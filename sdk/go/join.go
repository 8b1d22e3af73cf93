package udf

import (
	"errors"

	"wasmstream.io/platform/abi"
)

// Join registers a join function (kind join), as Flink's JoinFunction: f
// is called for each pair of a left and a right record with the same key
// (in the same window, or within an interval join's bounds) and calls emit
// for its results. The platform calls the module with groups of pairs (for
// a window join, one group per key and window having records on both
// sides; for an interval join, one per left record and the right records
// it matched) and batches many groups in one call; Join walks the pairs,
// every left record with every right record, in order. A record emitted
// with an empty Key takes the key, and with Timestamp 0 the window's
// End - 1, or for an interval join (w is zero) the later of the pair's
// timestamps. If f returns an error, what was emitted for the whole group
// is discarded and the group fails.
func Join(name string, f func(key []byte, w Window, left, right Record, emit func(Record)) error) {
	mustFunc(name, f == nil)
	functions.add(function{name: name, kind: abi.KindJoin, run: func(c *caller, frame []byte) []byte {
		w := &c.window
		defer func() { w.stamp = 0 }()
		return w.twoSided(c, frame, func(left, right []Record) error {
			interval := w.group.Flags&abi.GroupWindow == 0
			for _, l := range left {
				for _, r := range right {
					if interval {
						w.stamp = max(l.Timestamp, r.Timestamp)
					}
					if err := f(w.key, w.window, l, r, w.emitted); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}})
}

// CoGroup registers a coGroup function (kind co_group), as Flink's
// CoGroupFunction: f is called once per key and window with the window's
// left and right records, either of which may be empty, so that it can
// write inner, left, right and full outer joins. Emitted records inherit as
// with Join.
func CoGroup(name string, f func(key []byte, w Window, left, right []Record, emit func(Record)) error) {
	mustFunc(name, f == nil)
	functions.add(function{name: name, kind: abi.KindCoGroup, run: func(c *caller, frame []byte) []byte {
		return c.window.twoSided(c, frame, func(left, right []Record) error {
			return f(c.window.key, c.window.window, left, right, c.window.emitted)
		})
	}})
}

// errOneSided fails a group of a two-sided kind that has no right side.
var errOneSided = errors.New("udf: join group without a right side")

// twoSided runs one for every two-sided group of a join or co_group frame,
// with the group's left and right records decoded.
func (w *windowCall) twoSided(c *caller, frame []byte, one func(left, right []Record) error) []byte {
	if err := w.begin(c, frame); err != nil {
		return c.fail(err.Error())
	}
	w.each(c, func(g uint32) error {
		n := w.readRecords()
		if !w.gr.NextSide() {
			return errOneSided
		}
		m := w.readRecordsFrom(n)
		w.index, w.key = g, w.group.Key
		w.window = Window{Start: w.group.WindowStart, End: w.group.WindowEnd}
		w.emitting = true
		err := one(w.recs[:n], w.recs[n:n+m])
		w.emitting = false
		return err
	})
	return w.end(c)
}
