package state

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The memory backend keeps each key group in a table: an index from
// composite key to position, and the entries (cells) in pages of pageCells.
// Snapshots are copy-on-write, as Flink's CopyOnWriteStateMap: a snapshot
// copies only the tables' page lists; afterwards the task copies a page, a
// cell's bytes or a map's entries before its first write to something a
// live snapshot may still read. Everything carries the epoch it was made in;
// what is not newer than the newest live snapshot (the guard) is shared.
const (
	pageShift = 7
	pageCells = 1 << pageShift
	pageMask  = pageCells - 1
)

// Accounted sizes, estimates of what Go spends beyond the bytes of keys and
// values: a cell with its index entry, a map state's entry, a map state's map.
const (
	cellOverhead   = 96
	subOverhead    = 64
	subMapOverhead = 64
)

type memCell struct {
	key   string
	val   []byte
	sub   *memSub
	epoch uint64
}

// memSub is a map state's entries for one composite key.
type memSub struct {
	epoch uint64
	bytes int64
	m     map[string][]byte
}

type memPage struct {
	epoch uint64
	cells [pageCells]memCell
}

type memTable struct {
	index map[string]uint32
	pages []*memPage
	n     uint32
}

func (t *memTable) cell(i uint32) *memCell { return &t.pages[i>>pageShift].cells[i&pageMask] }

type memStore struct {
	states []stateInfo
	clock  Clock
	first  int
	tables []memTable
	cells  int
	acct   accountant
	epoch  uint64
	// guard is the epoch of the newest live snapshot, 0 without one.
	guard atomic.Uint64
	// mu guards live, the epochs of the snapshots not yet released.
	mu   sync.Mutex
	live []uint64
	// cursor is where the next sweep starts.
	cursor struct {
		t int
		i uint32
	}
	scratch []byte
	keys    []string
}

func newMemStore(states []stateInfo, clock Clock, r Range, budget *Budget) *memStore {
	return &memStore{states: states, clock: clock, first: r.First, tables: make([]memTable, r.Len()), acct: accountant{budget: budget}, epoch: 1}
}

// clone copies b into a new slice of capacity len(b), which is what the
// accounting counts.
func clone(b []byte) []byte {
	c := make([]byte, len(b))
	copy(c, b)
	return c
}

// view is a read-only byte view of s.
func view(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func (m *memStore) find(kg int, k []byte) (*memTable, uint32, bool) {
	t := &m.tables[kg-m.first]
	i, ok := t.index[string(k)]
	return t, i, ok
}

func (m *memStore) shared(epoch uint64) bool { return epoch <= m.guard.Load() }

// writable returns cell i for writing, copying its page first if a snapshot
// may read it.
func (m *memStore) writable(t *memTable, i uint32) *memCell {
	p := t.pages[i>>pageShift]
	if m.shared(p.epoch) {
		c := new(memPage)
		*c = *p
		c.epoch = m.epoch
		t.pages[i>>pageShift] = c
		p = c
	}
	return &p.cells[i&pageMask]
}

func (m *memStore) insert(t *memTable, k, v []byte, sub *memSub) error {
	key := string(k)
	size := int64(cellOverhead + len(key) + len(v))
	if sub != nil {
		size = int64(cellOverhead+len(key)) + sub.bytes
	}
	if err := m.acct.grow(size); err != nil {
		return err
	}
	if t.index == nil {
		t.index = make(map[string]uint32)
	}
	pos := t.n
	if int(pos>>pageShift) == len(t.pages) {
		t.pages = append(t.pages, &memPage{epoch: m.epoch})
	}
	c := m.writable(t, pos)
	*c = memCell{key: key, sub: sub, epoch: m.epoch}
	if sub == nil {
		c.val = clone(v)
	}
	t.index[key] = pos
	t.n++
	m.cells++
	return nil
}

// remove deletes cell i, moving the table's last cell into its place.
func (m *memStore) remove(t *memTable, i uint32) {
	c := m.writable(t, i)
	size := int64(cellOverhead + len(c.key) + cap(c.val))
	if c.sub != nil {
		size += c.sub.bytes
	}
	_ = m.acct.grow(-size)
	delete(t.index, c.key)
	last := t.n - 1
	if i != last {
		l := m.writable(t, last)
		*c = *l
		t.index[c.key] = i
		c = l
	}
	*c = memCell{}
	t.n--
	m.cells--
	if t.n&pageMask == 0 {
		t.pages[len(t.pages)-1] = nil
		t.pages = t.pages[:len(t.pages)-1]
	}
}

func (m *memStore) get(kg int, k []byte) ([]byte, bool, error) {
	t, i, ok := m.find(kg, k)
	if !ok {
		return nil, false, nil
	}
	return t.cell(i).val, true, nil
}

func (m *memStore) put(kg int, k, v []byte) error {
	t, i, ok := m.find(kg, k)
	if !ok {
		return m.insert(t, k, v, nil)
	}
	return m.setVal(m.writable(t, i), v)
}

// setVal replaces a cell's bytes, in place when they are its own and the
// capacity fits without waste.
func (m *memStore) setVal(c *memCell, v []byte) error {
	if !m.shared(c.epoch) && cap(c.val) >= len(v) && cap(c.val) <= 2*len(v)+16 {
		c.val = c.val[:len(v)]
		copy(c.val, v)
		return nil
	}
	if err := m.acct.grow(int64(len(v) - cap(c.val))); err != nil {
		return err
	}
	c.val = clone(v)
	c.epoch = m.epoch
	return nil
}

func (m *memStore) appendTo(kg int, k, v []byte) error {
	t, i, ok := m.find(kg, k)
	if !ok {
		return m.insert(t, k, v, nil)
	}
	c := m.writable(t, i)
	if !m.shared(c.epoch) && cap(c.val)-len(c.val) >= len(v) {
		c.val = append(c.val, v...)
		return nil
	}
	size := max(2*cap(c.val), len(c.val)+len(v))
	if err := m.acct.grow(int64(size - cap(c.val))); err != nil {
		return err
	}
	grown := make([]byte, len(c.val)+len(v), size)
	copy(grown, c.val)
	copy(grown[len(c.val):], v)
	c.val, c.epoch = grown, m.epoch
	return nil
}

func (m *memStore) del(kg int, k []byte) error {
	if t, i, ok := m.find(kg, k); ok {
		m.remove(t, i)
	}
	return nil
}

func (m *memStore) subGet(kg int, k, uk []byte) ([]byte, bool, error) {
	t, i, ok := m.find(kg, k)
	if !ok {
		return nil, false, nil
	}
	v, ok := t.cell(i).sub.m[string(uk)]
	return v, ok, nil
}

// writableSub returns the cell's map for writing, copying it first if a
// snapshot may read it.
func (m *memStore) writableSub(c *memCell) *memSub {
	if m.shared(c.sub.epoch) {
		c.sub = &memSub{epoch: m.epoch, bytes: c.sub.bytes, m: maps.Clone(c.sub.m)}
	}
	return c.sub
}

func (m *memStore) subPut(kg int, k, uk, v []byte) error {
	t, i, ok := m.find(kg, k)
	size := int64(subOverhead + len(uk) + len(v))
	if !ok {
		sub := &memSub{epoch: m.epoch, bytes: size + subMapOverhead, m: map[string][]byte{string(uk): clone(v)}}
		return m.insert(t, k, nil, sub)
	}
	c := m.writable(t, i)
	if old, ok := c.sub.m[string(uk)]; ok {
		size = int64(len(v) - cap(old))
	}
	if err := m.acct.grow(size); err != nil {
		return err
	}
	sub := m.writableSub(c)
	sub.m[string(uk)] = clone(v)
	sub.bytes += size
	return nil
}

func (m *memStore) subDel(kg int, k, uk []byte) error {
	t, i, ok := m.find(kg, k)
	if !ok {
		return nil
	}
	old, ok := t.cell(i).sub.m[string(uk)]
	if !ok {
		return nil
	}
	if len(t.cell(i).sub.m) == 1 {
		m.remove(t, i)
		return nil
	}
	sub := m.writableSub(m.writable(t, i))
	size := int64(subOverhead + len(uk) + cap(old))
	delete(sub.m, string(uk))
	sub.bytes -= size
	return m.acct.grow(-size)
}

// sortedKeys lists a map's keys in order into scratch.
func sortedKeys(scratch []string, m map[string][]byte) []string {
	scratch = scratch[:0]
	for k := range m {
		scratch = append(scratch, k)
	}
	slices.Sort(scratch)
	return scratch
}

func (m *memStore) subRange(kg int, k []byte, fn func(uk, v []byte) error) error {
	t, i, ok := m.find(kg, k)
	if !ok {
		return nil
	}
	sub := t.cell(i).sub.m
	m.keys = sortedKeys(m.keys, sub)
	for _, uk := range m.keys {
		if err := fn(view(uk), sub[uk]); err != nil {
			return err
		}
	}
	return nil
}

func (m *memStore) subClear(kg int, k []byte) error { return m.del(kg, k) }

func (m *memStore) sweep(n int) error {
	if m.cells == 0 {
		return nil
	}
	now := m.clock.Now()
	if n < 0 {
		n = m.cells
		m.cursor.t, m.cursor.i = 0, 0
	}
	for visited, emptyTables := 0, 0; visited < n && m.cells > 0 && emptyTables <= len(m.tables); {
		if m.cursor.t >= len(m.tables) {
			m.cursor.t, m.cursor.i = 0, 0
		}
		t := &m.tables[m.cursor.t]
		if m.cursor.i >= t.n {
			if m.cursor.i == 0 {
				emptyTables++
			}
			m.cursor.t++
			m.cursor.i = 0
			continue
		}
		emptyTables = 0
		visited++
		kept, err := m.prune(t, m.cursor.i, now)
		if err != nil {
			return err
		}
		if kept {
			m.cursor.i++
		}
	}
	return nil
}

// prune drops the expired data of cell i and reports whether the cell is
// still there.
func (m *memStore) prune(t *memTable, i uint32, now int64) (bool, error) {
	c := t.cell(i)
	st := &m.states[stateOf(view(c.key))]
	if st.ttl == 0 {
		return true, nil
	}
	if c.sub == nil {
		keep, drop := st.prunePoint(c.val, now, m.scratch)
		switch {
		case drop:
			m.remove(t, i)
			return false, nil
		case len(keep) != len(c.val):
			m.scratch = keep
			return true, m.setVal(m.writable(t, i), keep)
		}
		return true, nil
	}
	expired := 0
	for _, v := range c.sub.m {
		if st.stampExpired(v, now) {
			expired++
		}
	}
	switch {
	case expired == len(c.sub.m):
		m.remove(t, i)
		return false, nil
	case expired > 0:
		sub := m.writableSub(m.writable(t, i))
		var freed int64
		for uk, v := range sub.m {
			if st.stampExpired(v, now) {
				freed += int64(subOverhead + len(uk) + cap(v))
				delete(sub.m, uk)
			}
		}
		sub.bytes -= freed
		return true, m.acct.grow(-freed)
	}
	return true, nil
}

func (m *memStore) bytes() int64 { return m.acct.bytes }

func (m *memStore) budgetBytes() int64 { return m.acct.published.Load() }

func (m *memStore) close() error {
	m.acct.close()
	m.tables = nil
	m.cells = 0
	return nil
}

func (m *memStore) snapshot() (storeSnapshot, error) {
	s := &memSnapshot{m: m, epoch: m.epoch, first: m.first, tables: make([]memSnapTable, len(m.tables))}
	for i := range m.tables {
		t := &m.tables[i]
		s.tables[i] = memSnapTable{pages: slices.Clone(t.pages), n: t.n}
	}
	m.mu.Lock()
	m.live = append(m.live, m.epoch)
	m.guard.Store(m.epoch)
	m.mu.Unlock()
	m.epoch++
	return s, nil
}

// release forgets a snapshot: what only it shared is writable again.
func (m *memStore) release(epoch uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i := slices.Index(m.live, epoch); i >= 0 {
		m.live = slices.Delete(m.live, i, i+1)
	}
	var guard uint64
	for _, e := range m.live {
		guard = max(guard, e)
	}
	m.guard.Store(guard)
}

type memSnapTable struct {
	pages []*memPage
	n     uint32
}

type memSnapshot struct {
	m        *memStore
	epoch    uint64
	first    int
	tables   []memSnapTable
	keys     []string
	released atomic.Bool
}

func (s *memSnapshot) each(kg int, fn func(k, uk, v []byte, sub bool) error) error {
	t := &s.tables[kg-s.first]
	for i := uint32(0); i < t.n; i++ {
		c := &t.pages[i>>pageShift].cells[i&pageMask]
		if c.sub == nil {
			if err := fn(view(c.key), nil, c.val, false); err != nil {
				return err
			}
			continue
		}
		s.keys = sortedKeys(s.keys, c.sub.m)
		for _, uk := range s.keys {
			if err := fn(view(c.key), view(uk), c.sub.m[uk], true); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *memSnapshot) release() {
	if !s.released.Swap(true) {
		s.tables = nil
		s.m.release(s.epoch)
	}
}
