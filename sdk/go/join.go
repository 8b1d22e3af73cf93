package udf

import (
	"errors"

	"wasmstream.io/platform/abi"
)

// Join registers a window join function (kind join), as Flink's
// JoinFunction: f is called for each pair of a left and a right record with
// the same key in the same window, and calls emit for its results. The
// platform calls the module once per key and window having records on both
// sides (and batches many of them in one call); Join walks the pairs, every
// left record (in arrival order) with every right record. A record emitted
// with an empty Key takes the key, and with Timestamp 0 the window's
// End - 1. If f returns an error, what was emitted for the whole window is
// discarded and the window fails.
func Join(name string, f func(key []byte, w Window, left, right Record, emit func(Record)) error) {
	mustFunc(name, f == nil)
	functions.add(function{name: name, kind: abi.KindJoin, run: func(c *caller, frame []byte) []byte {
		return c.window.twoSided(c, frame, func(left, right []Record) error {
			for _, l := range left {
				for _, r := range right {
					if err := f(c.window.key, c.window.window, l, r, c.window.emitted); err != nil {
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
