package join

import "container/heap"

// joinKey is the buffered records of one key on one side of an interval
// join. Most keys hold one record at a time (a join whose keys come and
// go): recs starts in one, so that such a key costs no allocation of its
// own for it.
type joinKey struct {
	key  string
	recs []joinRec
	one  [1]joinRec
}

// newJoinKey is a key without records.
func newJoinKey(key string) *joinKey {
	k := &joinKey{key: key}
	k.recs = k.one[:0:1]
	return k
}

// joinExp says that a record of key k expires at the watermark exp.
type joinExp struct {
	exp int64
	k   *joinKey
}

// joinExpiries orders the expiries of one side's records. Records mostly
// come in time order, so expiries go to a queue while they do not decrease
// and to a heap otherwise: each costs O(1) or O(log n).
type joinExpiries struct {
	queue []joinExp
	head  int
	late  joinExpHeap
}

func (e *joinExpiries) push(x joinExp) {
	if n := len(e.queue); n > e.head && x.exp < e.queue[n-1].exp {
		heap.Push(&e.late, x)
		return
	}
	if e.head > 0 && e.head == len(e.queue) {
		e.queue, e.head = e.queue[:0], 0
	}
	e.queue = append(e.queue, x)
}

// pop returns an entry that expired at wm, if any.
func (e *joinExpiries) pop(wm int64) (joinExp, bool) {
	if len(e.late) > 0 && e.late[0].exp <= wm {
		return heap.Pop(&e.late).(joinExp), true
	}
	if e.head < len(e.queue) && e.queue[e.head].exp <= wm {
		x := e.queue[e.head]
		e.queue[e.head] = joinExp{}
		e.head++
		if e.head >= 1024 && e.head*2 >= len(e.queue) {
			n := copy(e.queue, e.queue[e.head:])
			clear(e.queue[n:])
			e.queue, e.head = e.queue[:n], 0
		}
		return x, true
	}
	return joinExp{}, false
}

// joinExpHeap is a min-heap of expiries.
type joinExpHeap []joinExp

func (h joinExpHeap) Len() int           { return len(h) }
func (h joinExpHeap) Less(i, j int) bool { return h[i].exp < h[j].exp }
func (h joinExpHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *joinExpHeap) Push(x any)        { *h = append(*h, x.(joinExp)) }
func (h *joinExpHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = joinExp{}
	*h = old[:len(old)-1]
	return x
}
