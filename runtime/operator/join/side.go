package join

import "bytes"

// joinSide is the buffered records of one side of an interval join. It
// starts as a log in time order that the other side's records search by
// time, comparing keys: buffering a record then costs an append, and
// forgetting it a step of the log's head, with no key map, entry or expiry
// of its own (docs/RATIONALE.md, "An interval join side keeps a log until a
// key index pays"). A side whose log costs more than a key index would,
// because the other side searches it often or records come out of order,
// moves its records into an index by key for good.
type joinSide struct {
	// log holds the records in time order, ties in arrival order, while
	// keys is nil; log[head:] are buffered.
	log  []logRec
	head int
	// keys holds the records by key once the side is indexed, and expiries
	// orders them by the watermark at which they expire.
	keys     map[string]*joinKey
	expiries joinExpiries
	// adds counts the records buffered in the log, and work the log entries
	// the other side's searches looked at and out-of-order records moved.
	adds, work int64
}

// logRec is a record of a side's log: its key and value back to back in kv.
type logRec struct {
	ts   int64
	kv   []byte
	klen int
}

func (r *logRec) key() []byte   { return r.kv[:r.klen] }
func (r *logRec) value() []byte { return r.kv[r.klen:] }

// A side indexes its records once its log's work passes logWorkPerAdd per
// record buffered, beyond logWorkFloor: a search's step or a moved entry
// costs a few nanoseconds, a key index a map entry, an allocation and an
// expiry per record, tens of times more. Both counts are halved whenever
// logDecayAdds records were buffered, so that a long cheap past does not
// pay for a costly present: a side whose log turns costly turns into an
// index within about 1.1 million entries looked at or moved.
const (
	logWorkPerAdd = 16
	logWorkFloor  = 1 << 16
	logDecayAdds  = 1 << 16
)

// indexed reports whether the side keeps its records by key.
func (s *joinSide) indexed() bool { return s.keys != nil }

// appendLog buffers a record in time order; kv is the side's copy of its
// key and value.
func (s *joinSide) appendLog(ts int64, kv []byte, klen int) {
	if s.adds++; s.adds == logDecayAdds {
		s.adds, s.work = s.adds/2, s.work/2
	}
	r := logRec{ts: ts, kv: kv, klen: klen}
	n := len(s.log)
	if n == s.head || s.log[n-1].ts <= ts {
		s.log = append(s.log, r)
		return
	}
	// Out of order (so ts+1 does not overflow): after the records at or
	// before ts.
	at := s.head + search(s.log[s.head:], ts+1)
	s.log = append(s.log, logRec{})
	copy(s.log[at+1:], s.log[at:n])
	s.log[at] = r
	s.work += int64(n - at)
}

// matches appends to dst the buffered records of key whose time is in
// [lo, hi]: in the log's order, or in the key's.
func (s *joinSide) matches(dst []joinRec, key []byte, lo, hi int64) []joinRec {
	if s.indexed() {
		if k := s.keys[string(key)]; k != nil {
			for _, r := range k.recs {
				if r.ts >= lo && r.ts <= hi {
					dst = append(dst, r)
				}
			}
		}
		return dst
	}
	live := s.log[s.head:]
	i := search(live, lo)
	s.work++
	for ; i < len(live) && live[i].ts <= hi; i++ {
		s.work++
		if r := &live[i]; bytes.Equal(r.key(), key) {
			dst = append(dst, joinRec{ts: r.ts, value: r.value()})
		}
	}
	return dst
}

// bufferByKey buffers a record of an indexed side under its key.
func (s *joinSide) bufferByKey(key []byte, ts int64, value []byte, exp int64) {
	k := s.keys[string(key)]
	if k == nil {
		k = newJoinKey(string(key))
		s.keys[k.key] = k
	}
	k.recs = append(k.recs, joinRec{ts: ts, value: value})
	s.expiries.push(joinExp{exp: exp, k: k})
}

// costly reports whether the log has cost more than a key index would.
func (s *joinSide) costly() bool {
	return !s.indexed() && s.work > logWorkPerAdd*s.adds+logWorkFloor
}

// compact lets go of the log's records before its head once they are
// most of it.
func (s *joinSide) compact() {
	if s.head == len(s.log) {
		s.log, s.head = s.log[:0], 0
	} else if s.head >= 1024 && s.head*2 >= len(s.log) {
		n := copy(s.log, s.log[s.head:])
		clear(s.log[n:])
		s.log, s.head = s.log[:n], 0
	}
}

// search is the index of the first record of log whose time is at least ts.
func search(log []logRec, ts int64) int {
	lo, hi := 0, len(log)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if log[m].ts < ts {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
