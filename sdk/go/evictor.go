package udf

import (
	"errors"
	"fmt"

	"wasmstream.io/platform/abi"
)

// Eviction is one window an evictor is asked about: its key, bounds and
// records (in the order they were added), the operator's watermark
// (abi.NoWatermark before the first), and whether the evictor runs after
// the window function (Flink's evictAfter) or before it (evictBefore).
// Records are kept unless the evictor calls Evict.
type Eviction struct {
	Key       []byte
	Window    Window
	Records   []Record
	Watermark int64
	After     bool

	keep []byte
}

// NewEviction is an Eviction of records of window w, before the window
// function and with no watermark yet, that keeps every record: for testing
// an evictor natively. The platform makes its own.
func NewEviction(w Window, recs []Record) *Eviction {
	e := &Eviction{Window: w, Records: recs, Watermark: abi.NoWatermark}
	e.keepAll()
	return e
}

// keepAll sets the keep bitmap of e.Records to keep every record.
func (e *Eviction) keepAll() {
	n := len(e.Records)
	e.keep = e.keep[:0]
	for range abi.KeepBitmapLen(n) {
		e.keep = append(e.keep, 0xff)
	}
	if r := n % 8; r != 0 {
		e.keep[len(e.keep)-1] = 1<<r - 1
	}
}

// Evict removes record i (an index into Records) from the window.
func (e *Eviction) Evict(i int) {
	if i < 0 || i >= len(e.Records) {
		panic(fmt.Sprintf("udf: evict record %d of %d", i, len(e.Records)))
	}
	e.keep[i/8] &^= 1 << (i % 8)
}

// Evicted reports whether record i has been evicted.
func (e *Eviction) Evicted(i int) bool { return !abi.Keeps(e.keep, i) }

// Evictor registers a custom window evictor (kind evictor), as Flink's
// Evictor: it is called for each window that fires, before its window
// function, after it or both (the job spec's evictor.when says), and calls
// Evict for each record to remove. What it evicts is gone from the window,
// for its later firings too. If f returns an error, the window fails (it
// goes through on_udf_error) and keeps its records.
func Evictor(name string, f func(e *Eviction) error) {
	mustFunc(name, f == nil)
	functions.add(function{name: name, kind: abi.KindEvictor, run: func(c *caller, frame []byte) []byte {
		return c.window.evict(c, f, frame)
	}})
}

func (w *windowCall) evict(c *caller, f func(*Eviction) error, frame []byte) []byte {
	if err := w.begin(c, frame); err != nil {
		return c.fail(err.Error())
	}
	head := w.gr.Head()
	var e Eviction
	w.each(c, func(g uint32) error {
		if head.Op != abi.OpEvictBefore && head.Op != abi.OpEvictAfter {
			return errors.New("udf: evictor called with an unknown op")
		}
		n := w.readRecords()
		e = Eviction{Key: w.group.Key, Window: Window{Start: w.group.WindowStart, End: w.group.WindowEnd},
			Records: w.recs[:n], Watermark: head.Watermark, After: head.Op == abi.OpEvictAfter, keep: e.keep}
		e.keepAll()
		if err := f(&e); err != nil {
			return err
		}
		c.out = abi.AppendEntryAccumulator(c.out, g, e.keep)
		c.count++
		return nil
	})
	return w.end(c)
}
