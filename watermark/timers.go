package watermark

import (
	"bytes"
	"encoding/binary"
	"sort"
	"unsafe"

	"wasmstream.io/platform/abi"
)

// Timer is a registered timer: a timestamp for a key and a namespace (a
// window, for window operators; empty for process functions). The slices a
// fired timer carries are valid until its fire function returns, and must
// not be modified.
type Timer struct {
	Timestamp int64
	Key       []byte
	Namespace []byte
}

// TimerService holds the event-time and processing-time timers of one
// operator subtask, de-duplicated by (domain, timestamp, key, namespace). It
// is owned by its task's goroutine.
type TimerService struct {
	domains [2]timerQueue
	scratch []byte
	// free are removed entries kept for reuse, so that a service in a
	// steady state registers timers without allocating.
	free []*timerEntry
}

// timerQueue is one domain's timers: a min-heap in firing order and an index
// by identity for de-duplication and deletion.
type timerQueue struct {
	heap  []*timerEntry
	index map[string]*timerEntry
}

// timerEntry owns the bytes of its timer: id is ts | key length | key |
// namespace, and the map key, Key and Namespace all view it. id is never
// modified after the entry is made.
type timerEntry struct {
	timer Timer
	id    []byte
	pos   int
}

// NewTimerService makes an empty timer service.
func NewTimerService() *TimerService {
	s := &TimerService{}
	for i := range s.domains {
		s.domains[i].index = map[string]*timerEntry{}
	}
	return s
}

func (s *TimerService) queue(domain abi.TimeDomain) *timerQueue {
	return &s.domains[domain&1]
}

// identity encodes a timer's identity into the service's scratch buffer.
func (s *TimerService) identity(ts int64, key, namespace []byte) []byte {
	b := binary.LittleEndian.AppendUint64(s.scratch[:0], uint64(ts))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(key)))
	b = append(b, key...)
	b = append(b, namespace...)
	s.scratch = b
	return b
}

// Register adds a timer unless an identical one is registered. It copies the
// bytes of key and namespace.
func (s *TimerService) Register(domain abi.TimeDomain, ts int64, key, namespace []byte) {
	q := s.queue(domain)
	id := s.identity(ts, key, namespace)
	if _, ok := q.index[string(id)]; ok {
		return
	}
	var e *timerEntry
	if n := len(s.free); n > 0 {
		e, s.free = s.free[n-1], s.free[:n-1]
	} else {
		e = &timerEntry{}
	}
	own := append(e.id[:0], id...)
	e.id = own
	e.timer = Timer{
		Timestamp: ts,
		Key:       own[12 : 12+len(key) : 12+len(key)],
		Namespace: own[12+len(key) : len(own) : len(own)],
	}
	q.index[unsafe.String(unsafe.SliceData(own), len(own))] = e
	q.push(e)
}

// Delete removes a timer; deleting one that is not registered does nothing.
func (s *TimerService) Delete(domain abi.TimeDomain, ts int64, key, namespace []byte) {
	q := s.queue(domain)
	e, ok := q.index[string(s.identity(ts, key, namespace))]
	if !ok {
		return
	}
	delete(q.index, string(e.id))
	q.remove(e.pos)
	s.free = append(s.free, e)
}

// Advance fires, in (timestamp, key, namespace) order, every timer of the
// domain with timestamp <= upTo, removing each before calling fire. Timers
// that fire registers and that are due fire in the same call. An error from
// fire stops Advance; the timers not yet fired stay registered.
func (s *TimerService) Advance(domain abi.TimeDomain, upTo int64, fire func(Timer) error) error {
	q := s.queue(domain)
	for len(q.heap) > 0 && q.heap[0].timer.Timestamp <= upTo {
		e := q.heap[0]
		q.remove(0)
		delete(q.index, string(e.id))
		err := fire(e.timer)
		// Only now may the entry's bytes, which the fired timer views, be
		// reused.
		s.free = append(s.free, e)
		if err != nil {
			return err
		}
	}
	return nil
}

// Next is the earliest timestamp of the domain's timers.
func (s *TimerService) Next(domain abi.TimeDomain) (ts int64, ok bool) {
	q := s.queue(domain)
	if len(q.heap) == 0 {
		return 0, false
	}
	return q.heap[0].timer.Timestamp, true
}

// Len is the number of the domain's timers.
func (s *TimerService) Len(domain abi.TimeDomain) int { return len(s.queue(domain).heap) }

// Timers lists the domain's timers in firing order, for a snapshot. The
// slices view the service's own bytes: they are valid until the next
// Register, Delete or Advance.
func (s *TimerService) Timers(domain abi.TimeDomain) []Timer {
	q := s.queue(domain)
	out := make([]Timer, len(q.heap))
	for i, e := range q.heap {
		out[i] = e.timer
	}
	sort.Slice(out, func(i, j int) bool { return timerLess(&out[i], &out[j]) })
	return out
}

// Restore registers timers (from a snapshot) in the domain.
func (s *TimerService) Restore(domain abi.TimeDomain, timers []Timer) {
	for i := range timers {
		s.Register(domain, timers[i].Timestamp, timers[i].Key, timers[i].Namespace)
	}
}

func timerLess(a, b *Timer) bool {
	if a.Timestamp != b.Timestamp {
		return a.Timestamp < b.Timestamp
	}
	if c := bytes.Compare(a.Key, b.Key); c != 0 {
		return c < 0
	}
	return bytes.Compare(a.Namespace, b.Namespace) < 0
}

func (q *timerQueue) less(i, j int) bool { return timerLess(&q.heap[i].timer, &q.heap[j].timer) }

func (q *timerQueue) swap(i, j int) {
	q.heap[i], q.heap[j] = q.heap[j], q.heap[i]
	q.heap[i].pos, q.heap[j].pos = i, j
}

func (q *timerQueue) push(e *timerEntry) {
	e.pos = len(q.heap)
	q.heap = append(q.heap, e)
	q.up(e.pos)
}

// remove takes the entry at heap position i out of the heap.
func (q *timerQueue) remove(i int) {
	last := len(q.heap) - 1
	if i != last {
		q.swap(i, last)
	}
	q.heap[last] = nil
	q.heap = q.heap[:last]
	if i != last {
		if !q.down(i) {
			q.up(i)
		}
	}
}

func (q *timerQueue) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !q.less(i, parent) {
			return
		}
		q.swap(i, parent)
		i = parent
	}
}

// down sifts position i down and reports whether it moved.
func (q *timerQueue) down(i int) bool {
	start := i
	n := len(q.heap)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.less(r, l) {
			m = r
		}
		if !q.less(m, i) {
			break
		}
		q.swap(i, m)
		i = m
	}
	return i > start
}
